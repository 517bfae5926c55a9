// Command gowalk drives Sluice through Debian's Go AWS SDKs (v2 1.17, v1 1.44): what a Go user does with SQS
// and SNS, each answer checked. Both SDKs of those releases speak the Query (XML) protocol to SQS and SNS.
//
// Usage: gowalk ENDPOINT PREFIX
//
// Credentials and region come from the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION). Prints
// one line per check and `GO SDK WALK PASSED` at the end; exits 1 on the first mismatch or failed call.
//
// It builds offline in GOPATH mode against Debian's sources (apt golang-github-aws-aws-sdk-go-v2-dev
// golang-github-aws-aws-sdk-go-dev): GO111MODULE=off GOPATH=/usr/share/gocode go build -o gowalk *.go. Debian
// packs the whole v2 SDK as one module, so a go.mod would need a replace directive for each of its submodules.
package main

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
)

var checks int

// expect stops the walk with a mismatch: every later step builds on the earlier ones.
func expect(ok bool, what string, got ...any) {
	if !ok {
		fmt.Printf("MISMATCH %s: got %s\n", what, describe(got))
		os.Exit(1)
	}
	checks++
}

func expectEqual[T any](what string, got, want T) {
	if !reflect.DeepEqual(got, want) {
		fmt.Printf("MISMATCH %s: got %s, want %s\n", what, describe([]any{got}), describe([]any{want}))
		os.Exit(1)
	}
	checks++
}

func must(err error, what string) {
	if err != nil {
		fmt.Printf("FAILED %s: %v\n", what, err)
		os.Exit(1)
	}
}

func describe(values []any) string {
	parts := make([]string, len(values))
	for i, value := range values {
		parts[i] = fmt.Sprintf("%#v", value)
	}
	return strings.Join(parts, ", ")
}

func ok(format string, args ...any) {
	fmt.Printf("ok "+format+"\n", args...)
}

// envelopeFields are the keys of an SNS notification delivered to a queue without raw delivery, in AWS's order.
var envelopeFields = []string{"Type", "MessageId", "TopicArn", "Subject", "Message", "Timestamp",
	"SignatureVersion", "Signature", "SigningCertURL", "UnsubscribeURL", "MessageAttributes"}

// envelopeOrder returns the keys of a JSON object in the order they appear.
func envelopeOrder(body string) []string {
	decoder := json.NewDecoder(strings.NewReader(body))
	var keys []string
	_, err := decoder.Token()
	must(err, "reading the envelope")
	for decoder.More() {
		key, err := decoder.Token()
		must(err, "reading an envelope key")
		keys = append(keys, key.(string))
		var skip json.RawMessage
		must(decoder.Decode(&skip), "reading an envelope value")
	}
	return keys
}

// verifyEnvelope checks an SNS notification's signature as AWS's developer guide tells a subscriber to:
// the fields' names and values joined by newlines, RSA with SHA1 (SignatureVersion 1), with the certificate
// fetched from SigningCertURL.
func verifyEnvelope(envelope map[string]any) {
	expectEqual("SignatureVersion", envelope["SignatureVersion"], any("1"))
	response, err := http.Get(envelope["SigningCertURL"].(string))
	must(err, "fetching SigningCertURL")
	defer response.Body.Close()
	certificatePEM, err := io.ReadAll(response.Body)
	must(err, "reading the signing certificate")
	block, _ := pem.Decode(certificatePEM)
	expect(block != nil, "a PEM certificate at SigningCertURL", string(certificatePEM))
	certificate, err := x509.ParseCertificate(block.Bytes)
	must(err, "parsing the signing certificate")
	var signed strings.Builder
	for _, name := range []string{"Message", "MessageId", "Subject", "Timestamp", "TopicArn", "Type"} {
		if value, present := envelope[name]; present {
			fmt.Fprintf(&signed, "%s\n%s\n", name, value)
		}
	}
	signature, err := base64.StdEncoding.DecodeString(envelope["Signature"].(string))
	must(err, "decoding Signature")
	digest := sha1.Sum([]byte(signed.String()))
	key, isRSA := certificate.PublicKey.(*rsa.PublicKey)
	expect(isRSA, "an RSA signing key", certificate.PublicKeyAlgorithm.String())
	must(rsa.VerifyPKCS1v15(key, crypto.SHA1, digest[:], signature), "verifying the envelope's signature")
	ok("envelope signature verified with %s", envelope["SigningCertURL"])
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gowalk ENDPOINT PREFIX")
		os.Exit(2)
	}
	endpoint, prefix := os.Args[1], os.Args[2]
	walkV2(endpoint, prefix+"-v2")
	walkV1(endpoint, prefix+"-v1")
	fmt.Printf("GO SDK WALK PASSED (%d checks)\n", checks)
}
