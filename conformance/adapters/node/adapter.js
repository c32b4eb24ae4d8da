#!/usr/bin/env node
// A starter adapter for the harness9 conformance suite: protocol version 1 over stdin/stdout.
//
// Plain Node 20, no npm packages. Copy this file into your port, point OPS at your own code
// and run:  python -m conformance run --adapter "node path/to/adapter.js"
//
// One JSON object per line in each direction (conformance/PORTING.md). stdout carries protocol
// messages only: log with console.error, never console.log.
"use strict";

const readline = require("node:readline");

const PROTOCOL_VERSION = 1;
const IMPLEMENTATION = { name: "harness9-starter-node", version: "0.1.0", language: "javascript" };

// A domain error a case may expect: answered as {"seq", "error": {"code", "message"}}.
class DomainError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

// The case input does not have the shape the op needs (a bug in the case, not in your port).
class InvalidInput extends DomainError {
  constructor(message) {
    super("invalid_input", message);
  }
}

// An input this adapter runs only in part: answered as {"seq", "skipped": reason}, so the case
// is reported as skipped rather than failed.
class Skip extends Error {}

// ---------------------------------------------------------------------------------------------
// Input helpers. JSON.parse gives every number as a double: 5, 5.0 and 5e0 all arrive as 5, and
// integers beyond 2^53 have already lost digits. Check what you receive.

function field(input, name) {
  if (!Object.prototype.hasOwnProperty.call(input, name)) {
    throw new InvalidInput(`input.${name} is missing`);
  }
  return input[name];
}

function integerField(input, name) {
  const value = field(input, name);
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new InvalidInput(`input.${name}: expected an integer, got ${JSON.stringify(value)}`);
  }
  if (!Number.isSafeInteger(value)) {
    throw new Skip(`input.${name} is beyond 2^53: a JavaScript number cannot hold it exactly`);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Ops. Each takes the case's input object and returns the output (any JSON value), or a Promise
// of it; it throws DomainError for the errors SPEC.md names, InvalidInput for malformed input
// and Skip for what it does not support yet. Add yours here and they are declared at start.

// R-FMT: format a token count for people, in integer arithmetic only. BigInt is exact, and its
// division truncates, which is the floor here since n >= 1000.
function formatTokenCount(n) {
  if (n < 1000) return String(n); // R-FMT-1, negative numbers included
  const big = BigInt(n);
  const tenths = (value, unit) => {
    const whole = value / 10n;
    const digit = value % 10n;
    return digit === 0n ? `${whole}${unit}` : `${whole}.${digit}${unit}`;
  };
  const t = (big + 50n) / 100n; // tenths of a thousand, rounded half up (R-FMT-2)
  if (t < 10000n) return tenths(t, "K");
  return tenths((big + 50000n) / 100000n, "M"); // tenths of a million (R-FMT-3)
}

const OPS = {
  format_token_count: (input) => formatTokenCount(integerField(input, "n")),
  // estimate_tokens: (input) => ...,   see the ops table in conformance/PORTING.md
};

// ---------------------------------------------------------------------------------------------
// Protocol plumbing: nothing below needs to change when you add ops.

function send(message) {
  // One line per message, written at once: the runner waits for it before sending anything else.
  // Node has no flush call; on Linux a write to a pipe is synchronous, elsewhere it is queued in
  // order, so never process.exit() while a write may be pending (see "stop" below), never hold
  // answers back, and never print anything else on stdout.
  let line;
  try {
    line = JSON.stringify(message); // throws on a BigInt or a cycle
  } catch (exc) {
    console.error(`adapter: cannot write the answer as JSON: ${exc.message}`);
    line = JSON.stringify(failure(message.seq, "internal_error", `output is not JSON: ${exc.message}`));
  }
  process.stdout.write(line + "\n");
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// An error answer; seq is left out when the request had no usable one.
function failure(seq, code, message) {
  const error = { code, message };
  return Number.isInteger(seq) ? { seq, error } : { error };
}

async function run(request) {
  const seq = request.seq;
  if (!Number.isInteger(seq)) {
    return failure(null, "invalid_input", `run request without an integer seq: ${JSON.stringify(seq)}`);
  }
  const op = request.op;
  if (typeof op !== "string" || !isObject(request.input)) {
    return failure(seq, "invalid_input", "run request needs a string op and an object input");
  }
  if (!Object.prototype.hasOwnProperty.call(OPS, op)) {
    return { seq, skipped: `op ${JSON.stringify(op)} is not implemented by this adapter` };
  }
  try {
    const output = await OPS[op](request.input);
    if (output === undefined) return failure(seq, "internal_error", `op ${op} returned undefined`);
    return { seq, output };
  } catch (exc) {
    if (exc instanceof Skip) return { seq, skipped: exc.message || "not supported" };
    if (exc instanceof DomainError) return failure(seq, exc.code, exc.message);
    // A bug in the port or the adapter: say so on stderr, answer, and keep going. The runner
    // counts an internal_error answer as errored, never as a domain error (PORTING.md).
    console.error(exc && exc.stack ? exc.stack : exc);
    return failure(seq, "internal_error", String(exc && exc.message ? exc.message : exc));
  }
}

async function handleLine(line) {
  if (line.trim() === "") return;
  let request;
  try {
    request = JSON.parse(line);
  } catch (exc) {
    console.error(`adapter: not JSON: ${line.slice(0, 200)}`);
    send(failure(null, "invalid_input", `line is not JSON: ${exc.message}`));
    return;
  }
  if (!isObject(request)) {
    send(failure(null, "invalid_input", "line is not a JSON object"));
    return;
  }
  switch (request.cmd) {
    case "start":
      if (request.protocol !== PROTOCOL_VERSION) {
        const asked = JSON.stringify(request.protocol);
        console.error(`adapter: runner asks for protocol ${asked}; this adapter speaks ${PROTOCOL_VERSION}`);
      }
      send({ protocol: PROTOCOL_VERSION, implementation: IMPLEMENTATION, ops: Object.keys(OPS).sort() });
      return;
    case "run":
      send(await run(request));
      return;
    case "stop":
      // Nothing more on stdout; exit 0 once everything written so far has been handed over.
      process.stdout.write("", () => process.exit(0));
      return "stop";
    default:
      send(failure(request.seq, "invalid_input", `unknown cmd ${JSON.stringify(request.cmd)}`));
  }
}

function main() {
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  // Answer strictly in order, one request at a time, even when an op is asynchronous.
  let queue = Promise.resolve();
  let stopped = false;
  lines.on("line", (line) => {
    queue = queue.then(async () => {
      if (stopped) return;
      try {
        if ((await handleLine(line)) === "stop") {
          stopped = true;
          lines.close();
        }
      } catch (exc) {
        console.error(exc && exc.stack ? exc.stack : exc); // never crash on one bad line
      }
    });
  });
  lines.on("close", () => {
    queue.then(() => {
      if (!stopped) process.exit(0); // end of input without stop: also a clean exit
    });
  });
}

main();
