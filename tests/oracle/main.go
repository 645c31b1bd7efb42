// Command oracle answers patch and field-ownership questions with the upstream
// Kubernetes Go code, so the Rust engines in fieldwise-core can be compared
// with it case by case.
//
// It reads one JSON case per line on stdin and writes one JSON result per line
// on stdout, in order, flushing after each, so one process serves hundreds of
// thousands of cases. A case names its engine in "op"; see cases.go for the
// fields of each op and the upstream function that answers it.
//
// A result is {"result": ...} (or {"encoded": ...} / {"fieldsV1": ...}) when
// upstream accepts, {"error": "..."} when it rejects, and additionally
// "panic": true when upstream panicked (the panic is recovered so the stream
// goes on). A line that is not a case at all gets {"error": ..., "bad_case": true}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// maxLine bounds one input line; generated cases are far smaller.
const maxLine = 64 << 20

func main() {
	if err := serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oracle:", err)
		os.Exit(1)
	}
}

// serve answers every case line of in on out, one result line each.
func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 0, 1<<20), maxLine)
	writer := bufio.NewWriter(out)
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		encoded, err := json.Marshal(answerLine(line))
		if err != nil {
			encoded, _ = json.Marshal(Result{Error: "oracle: cannot encode result: " + err.Error(), BadCase: true})
		}
		if _, err := writer.Write(append(encoded, '\n')); err != nil {
			return err
		}
		if err := writer.Flush(); err != nil {
			return err
		}
	}
	return scanner.Err()
}

// answerLine decodes one case and runs it, turning panics into results.
func answerLine(line []byte) (result Result) {
	var c Case
	if err := json.Unmarshal(line, &c); err != nil {
		return Result{Error: "oracle: not a case: " + err.Error(), BadCase: true}
	}
	defer func() {
		if p := recover(); p != nil {
			result = Result{ID: c.ID, Error: fmt.Sprintf("panic: %v", p), Panic: true}
		}
	}()
	result = run(&c)
	result.ID = c.ID
	return result
}
