package faultproxy

import (
	"encoding/pem"
	"io"
)

func pemEncode(w io.Writer, der []byte) error {
	return pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der})
}
