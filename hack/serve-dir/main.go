// Command serve-dir serves a folder over HTTP on 127.0.0.1 (a free port) and
// writes its base URL to a file, so hack/krew-check.sh can let krew download
// release archives from a local "release" the way it does from GitHub:
//
//	go run ./hack/serve-dir -dir dist -url-file bin/krew/url &
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	dir := flag.String("dir", ".", "folder to serve")
	urlFile := flag.String("url-file", "", "file that receives the base URL once the server listens")
	flag.Parse()
	if err := run(*dir, *urlFile); err != nil {
		fmt.Fprintf(os.Stderr, "error: %v\n", err)
		os.Exit(1)
	}
}

func run(dir, urlFile string) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/"
	if urlFile != "" {
		// Written after Listen, renamed into place: a reader never sees a
		// URL that does not answer yet, nor half a line.
		if err := os.WriteFile(urlFile+".tmp", []byte(url+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(urlFile+".tmp", urlFile); err != nil {
			return err
		}
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}
