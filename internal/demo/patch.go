package demo

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

func metaPatch() metav1.PatchOptions { return metav1.PatchOptions{FieldManager: "longhorn-sim-demo"} }
