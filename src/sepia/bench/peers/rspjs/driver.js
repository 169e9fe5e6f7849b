// Drives rsp-js (npm) over the benchmark's own stream files, for `sepia bench`
// (src/sepia/bench/systems/rspjs.py builds the job and reads the JSON this prints).
//
// Usage: node driver.js JOB.json   (NODE_PATH must point at the node_modules holding rsp-js)
// JOB: {query, streams: [{iri, path}], background: [path], report_window, budget_s,
//       windows: [{name, stream, width, slide}]}
//
// How rsp-js is fed, and why:
// - synchronously: one stream element at a time (each of its triples is one rsp-js add with the
//   element's time); when an element makes a window report, the driver waits until that
//   evaluation's bindings have all been delivered before feeding the next element, so a
//   result's latency runs from the arrival that caused it. rsp-js evaluates asynchronously and
//   gives no end-of-evaluation signal: a caller that stops listening when its input ends loses
//   the results still in flight (the driver tracks each evaluation's end to avoid that; fed in
//   a tight loop and drained at the end, the counts here are the same).
// - rsp-js reports a window only when a later element of its stream arrives (window close is
//   noticed on arrival), so at the end of the input the driver feeds each window's stream one
//   punctuation quad (a predicate no query uses) just after each still-open window's close, as
//   an end-of-stream signal: every window that held data is reported once.
// - rsp-js evaluates on the close of every window; REPORT ON WINDOW CLOSE OF :w is honoured by
//   keeping the listener of that window only (engine.windows is public).
// - rsp-js prints a line per element and window to the console: the driver silences console
//   output (the strings are still built) and prints only its JSON result.
"use strict";

const fs = require("fs");
const zlib = require("zlib");
const { performance } = require("perf_hooks");
const N3 = require("n3");
const { RSPEngine } = require("rsp-js");

const PROV = "http://www.w3.org/ns/prov#";
const TIME_PREDICATES = [PROV + "generatedAtTime", PROV + "endedAtTime"];
const PUNCTUATION = N3.DataFactory.namedNode("urn:sepia:bench:punctuation");

const write = process.stdout.write.bind(process.stdout);
for (const level of ["log", "debug", "info", "warn", "error"]) {
  console[level] = () => {};
}

function readQuads(path) {
  let bytes = fs.readFileSync(path);
  if (path.endsWith(".gz")) {
    bytes = zlib.gunzipSync(bytes);
  }
  return new N3.Parser({ format: "application/trig" }).parse(bytes.toString("utf8"));
}

function timeOf(literal) {
  const value = literal.value;
  return /^-?\d+$/.test(value) ? Number(value) : Date.parse(value);
}

// The elements of one stream file, in file order: {time, stream, triples}.
function readElements(stream, index) {
  const times = new Map();
  const graphs = new Map();
  for (const quad of readQuads(stream.path)) {
    if (quad.graph.termType === "DefaultGraph") {
      if (TIME_PREDICATES.includes(quad.predicate.value)) {
        times.set(quad.subject.value, timeOf(quad.object));
      }
      continue;
    }
    const name = quad.graph.value;
    if (!graphs.has(name)) {
      graphs.set(name, []);
    }
    graphs.get(name).push(N3.DataFactory.quad(quad.subject, quad.predicate, quad.object));
  }
  return [...graphs].map(([name, triples]) => ({
    time: times.get(name), stream: stream.iri, order: index, triples,
  }));
}

// All streams merged by time; equal times keep the order the streams were given.
function mergedElements(streams) {
  const all = streams.flatMap((stream, index) => readElements(stream, index));
  return all.sort((a, b) => a.time - b.time || a.order - b.order);
}

// Punctuations that close every window still open after each stream's last element.
function punctuations(windows, elements) {
  const last = new Map(elements.map((element) => [element.stream, element.time]));
  const flush = [];
  for (const window of windows) {
    const end = last.get(window.stream);
    if (end === undefined) {
      continue;
    }
    for (let close = (Math.floor(end / window.slide) + 1) * window.slide;
      close - window.width <= end; close += window.slide) {
      flush.push({ time: close + 1, stream: window.stream, order: 0,
        triples: [N3.DataFactory.quad(PUNCTUATION, PUNCTUATION, PUNCTUATION)] });
    }
  }
  const unique = new Map(flush.map((element) => [`${element.stream} ${element.time}`, element]));
  return [...unique.values()].sort((a, b) => a.time - b.time);
}

// Wraps the engine's evaluation step so the driver knows when each evaluation has delivered
// all its bindings (rsp-js exposes no such signal).
function trackEvaluations(engine) {
  const pending = [];
  const r2r = engine.r2r;
  const execute = r2r.execute.bind(r2r);
  r2r.execute = (container) => {
    const evaluation = execute(container);
    pending.push(evaluation.then((bindings) => new Promise((resolve, reject) => {
      bindings.on("end", resolve);
      bindings.on("error", reject);
    })));
    return evaluation;
  };
  return async () => {
    while (pending.length > 0) {
      await pending.shift();
    }
  };
}

async function run(job) {
  const engine = new RSPEngine(job.query);
  for (const path of job.background) {
    readQuads(path).forEach((quad) => engine.addStaticData(quad));
  }
  const emitter = engine.register();
  if (job.report_window) {
    engine.windows.filter((window) => window.name !== job.report_window)
      .forEach((window) => window.emitter.removeAllListeners("RStream"));
  }
  const settle = trackEvaluations(engine);
  const latencies = [];
  let arrived = 0;
  emitter.on("RStream", () => latencies.push(performance.now() - arrived));

  const elements = mergedElements(job.streams);
  const deadline = performance.now() + job.budget_s * 1000;
  let fed = 0;
  let triples = 0;
  const feed = async (element) => {
    arrived = performance.now();
    const stream = engine.getStream(element.stream);
    element.triples.forEach((triple) => stream.add(triple, element.time));
    await settle();
  };
  for (const element of elements) {
    if (performance.now() > deadline) {
      return { elements: fed, triples, results: latencies.length, latencies_ms: latencies,
        complete: false };
    }
    if (engine.getStream(element.stream)) {
      await feed(element);
    }
    fed += 1;
    triples += element.triples.length;
  }
  for (const element of punctuations(job.windows, elements)) {
    await feed(element);
  }
  return { elements: fed, triples, results: latencies.length, latencies_ms: latencies,
    complete: true };
}

run(JSON.parse(fs.readFileSync(process.argv[2], "utf8")))
  .then((outcome) => write(JSON.stringify(outcome) + "\n"))
  .catch((error) => {
    process.stderr.write(`rsp-js driver: ${error.stack || error}\n`);
    process.exit(1);
  });
