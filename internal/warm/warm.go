package warm

import (
	_ "github.com/fatih/color"
	_ "github.com/spf13/cobra"
	_ "go.etcd.io/etcd/server/v3/embed"
	_ "k8s.io/apiextensions-apiserver/pkg/apiserver"
	_ "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	_ "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/apiserver/pkg/server"
	_ "k8s.io/cli-runtime/pkg/genericclioptions"
	_ "k8s.io/cli-runtime/pkg/printers"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/component-base/logs/api/v1"
	_ "sigs.k8s.io/yaml"
)
