// Command harness9-adapter is a starter adapter for the harness9 conformance suite: protocol
// version 1 over stdin/stdout (conformance/PORTING.md).
//
// Standard library only. Copy this folder into your port, point ops at your own code, then:
//
//	go build -o harness9-adapter . && python -m conformance run --adapter ./harness9-adapter
//
// One JSON object per line in each direction. stdout carries protocol messages only: log to
// stderr (the log package writes there by default).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
)

const protocolVersion = 1

var implementation = map[string]string{
	"name":     "harness9-starter-go",
	"version":  "0.1.0",
	"language": "go",
}

// DomainError is an error a case may expect: answered as {"seq", "error": {"code", "message"}}.
type DomainError struct {
	Code    string
	Message string
}

func (e *DomainError) Error() string { return e.Code + ": " + e.Message }

// invalidInput is for case input that does not have the shape the op needs.
func invalidInput(format string, args ...any) error {
	return &DomainError{Code: "invalid_input", Message: fmt.Sprintf(format, args...)}
}

// Skip marks an input this adapter runs only in part: answered as {"seq", "skipped": reason},
// so the case is reported as skipped rather than failed.
type Skip struct{ Reason string }

func (s *Skip) Error() string { return s.Reason }

// Input is a case's input object, its members still as raw JSON text.
type Input map[string]json.RawMessage

// Int reads an integer member. Only an integer literal counts (5, -5; not 5.0, 5e0 or "5"), as
// in the reference; a literal beyond int64 is skipped rather than silently wrapped.
func (in Input) Int(name string) (int64, error) {
	raw, ok := in[name]
	if !ok {
		return 0, invalidInput("input.%s is missing", name)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // never decode numbers into float64: it loses digits beyond 2^53
	var value any
	if err := dec.Decode(&value); err != nil {
		return 0, invalidInput("input.%s: %v", name, err)
	}
	number, ok := value.(json.Number)
	if !ok {
		return 0, invalidInput("input.%s: expected an integer, got %s", name, raw)
	}
	n, err := strconv.ParseInt(string(number), 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, &Skip{Reason: fmt.Sprintf("input.%s = %s does not fit in an int64", name, number)}
	}
	if err != nil {
		return 0, invalidInput("input.%s: expected an integer, got %s", name, number)
	}
	return n, nil
}

// ---------------------------------------------------------------------------------------------
// Ops. Each takes the case's input and returns the output (anything encoding/json can write),
// a *DomainError for the errors SPEC.md names, invalidInput(...) for malformed input, or a *Skip
// for what it does not support yet. Add yours to this table and they are declared at start.

var ops = map[string]func(Input) (any, error){
	"format_token_count": opFormatTokenCount,
	// "estimate_tokens": opEstimateTokens,   see the ops table in conformance/PORTING.md
}

func opFormatTokenCount(in Input) (any, error) {
	n, err := in.Int("n")
	if err != nil {
		return nil, err
	}
	return FormatTokenCount(n), nil
}

// FormatTokenCount formats a token count for people, in integer arithmetic only (R-FMT).
// (n + 50) / 100 would overflow near the top of int64, so the rounding reads the remainder.
func FormatTokenCount(n int64) string {
	if n < 1000 {
		return strconv.FormatInt(n, 10) // R-FMT-1, negative numbers included
	}
	roundedDiv := func(n, d int64) int64 { // n / d rounded half up, for n >= 0
		q := n / d
		if n%d >= d/2 {
			q++
		}
		return q
	}
	tenths := func(t int64, unit string) string {
		if t%10 == 0 {
			return strconv.FormatInt(t/10, 10) + unit
		}
		return strconv.FormatInt(t/10, 10) + "." + strconv.FormatInt(t%10, 10) + unit
	}
	if t := roundedDiv(n, 100); t < 10000 { // tenths of a thousand (R-FMT-2)
		return tenths(t, "K")
	}
	return tenths(roundedDiv(n, 100000), "M") // tenths of a million (R-FMT-3)
}

// ---------------------------------------------------------------------------------------------
// Protocol plumbing: nothing below needs to change when you add ops.

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type answer struct {
	Seq     *int64     `json:"seq,omitempty"`
	Output  any        `json:"output"`
	Error   *errorBody `json:"error,omitempty"`
	Skipped string     `json:"skipped,omitempty"`
}

// MarshalJSON writes seq first, then exactly one of output, error and skipped ("output": null
// is a real answer).
func (a answer) MarshalJSON() ([]byte, error) {
	key, value := "output", a.Output
	switch {
	case a.Error != nil:
		key, value = "error", a.Error
	case a.Skipped != "":
		key, value = "skipped", a.Skipped
	}
	body, err := encode(value)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	if a.Seq != nil {
		fmt.Fprintf(&buf, `"seq":%d,`, *a.Seq)
	}
	fmt.Fprintf(&buf, `"%s":%s}`, key, body)
	return buf.Bytes(), nil
}

// encode is json.Marshal without HTML escaping: < > & are written as themselves (\u003c is
// valid JSON, but hard to read in a failure line).
func encode(value any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type startAnswer struct {
	Protocol       int               `json:"protocol"`
	Implementation map[string]string `json:"implementation"`
	Ops            []string          `json:"ops"`
}

// adapter writes answers to a buffered stdout, one line each, flushed at once.
type adapter struct {
	out *bufio.Writer
}

// send writes one line and flushes it: the runner waits for it before sending anything else.
// An answer whose output cannot be written as JSON (a NaN, a channel) becomes internal_error.
func (a *adapter) send(message any) {
	body, err := encode(message)
	if err != nil {
		log.Printf("adapter: cannot write the answer as JSON: %v", err)
		var seq *int64
		if reply, ok := message.(answer); ok {
			seq = reply.Seq
		}
		body, _ = encode(errorAnswer(seq, "internal_error", "output is not JSON: %v", err))
	}
	a.out.Write(body)
	a.out.WriteByte('\n')
	if err := a.out.Flush(); err != nil {
		log.Printf("adapter: stdout: %v", err)
		os.Exit(1)
	}
}

func errorAnswer(seq *int64, code, format string, args ...any) answer {
	return answer{Seq: seq, Error: &errorBody{Code: code, Message: fmt.Sprintf(format, args...)}}
}

// run answers one run request, turning every failure of the op into an answer.
func run(seq *int64, op string, input Input) (reply answer) {
	handler, ok := ops[op]
	if !ok {
		return answer{Seq: seq, Skipped: fmt.Sprintf("op %q is not implemented by this adapter", op)}
	}
	// A panic or an error that is not a DomainError is a bug in the port: answered as
	// internal_error, which the runner counts as errored, never as a domain error (PORTING.md).
	defer func() { // say so on stderr, answer, and keep going
		if p := recover(); p != nil {
			log.Printf("adapter: panic in %s: %v\n%s", op, p, debug.Stack())
			reply = errorAnswer(seq, "internal_error", "panic: %v", p)
		}
	}()
	output, err := handler(input)
	var domain *DomainError
	var skip *Skip
	switch {
	case errors.As(err, &skip):
		return answer{Seq: seq, Skipped: skip.Reason}
	case errors.As(err, &domain):
		return errorAnswer(seq, domain.Code, "%s", domain.Message)
	case err != nil:
		return errorAnswer(seq, "internal_error", "%v", err)
	}
	return answer{Seq: seq, Output: output}
}

// request is one line from the runner, its members still raw so a bad one is reported, not fatal.
type request map[string]json.RawMessage

func (r request) str(name string) (string, bool) {
	var s string
	err := json.Unmarshal(r[name], &s)
	return s, err == nil
}

func (r request) seq() *int64 {
	var n int64
	if raw, ok := r["seq"]; ok && json.Unmarshal(raw, &n) == nil {
		return &n
	}
	return nil
}

// handle answers one line; it returns false after stop.
func (a *adapter) handle(line []byte) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return true
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req == nil {
		log.Printf("adapter: not a JSON object: %.200s", line)
		a.send(errorAnswer(nil, "invalid_input", "line is not a JSON object"))
		return true
	}
	cmd, _ := req.str("cmd")
	switch cmd {
	case "start":
		if string(req["protocol"]) != strconv.Itoa(protocolVersion) {
			log.Printf("adapter: runner asks for protocol %s; this adapter speaks %d",
				req["protocol"], protocolVersion)
		}
		names := make([]string, 0, len(ops))
		for name := range ops {
			names = append(names, name)
		}
		sort.Strings(names)
		a.send(startAnswer{Protocol: protocolVersion, Implementation: implementation, Ops: names})
	case "run":
		seq := req.seq()
		op, okOp := req.str("op")
		var input Input
		okInput := json.Unmarshal(req["input"], &input) == nil && input != nil
		switch {
		case seq == nil:
			a.send(errorAnswer(nil, "invalid_input", "run request without an integer seq"))
		case !okOp || !okInput:
			a.send(errorAnswer(seq, "invalid_input", "run request needs a string op and an object input"))
		default:
			a.send(run(seq, op, input))
		}
	case "stop":
		return false
	default:
		a.send(errorAnswer(req.seq(), "invalid_input", "unknown cmd %s", req["cmd"]))
	}
	return true
}

func main() {
	// bufio.Scanner stops at lines over 64 KiB; ReadBytes has no limit, and cases can be large.
	in := bufio.NewReader(os.Stdin)
	a := &adapter{out: bufio.NewWriter(os.Stdout)}
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 && !a.handle(line) {
			return // stop: write nothing more, exit 0
		}
		if err != nil {
			if err != io.EOF {
				log.Printf("adapter: stdin: %v", err)
			}
			return
		}
	}
}
