'use strict';
// http-node: the `http` suite's HTTP/1.1 server (docs/workloads.md) on Node.js's
// built-in node:http, started by the http-node wrapper:
//
//   node server.js --port P [--threads W]
//
// Node runs JavaScript on one thread per process, so W > 1 is what Node's own docs
// prescribe for using more cores: the node:cluster module, a primary process that
// forks W workers sharing one listening socket (on Linux the primary accepts and
// hands the connections round-robin to the workers; each connection then belongs to
// its worker). W = 1 is one plain process, no cluster. Node adds Date itself and
// answers keep-alive and pipelined requests in order.
//
// /delay/MS: setTimeout alone can answer up to ~1 ms early: Node (libuv) keeps timer
// start and expiry in whole milliseconds, so a timer started at 100.9 ms "fires at 110"
// after 9.1 ms. The handler therefore checks a monotonic deadline when the timer fires
// and waits out the rest if it came early (see README.md).
const cluster = require('node:cluster');
const http = require('node:http');
const os = require('node:os');

function usage(why) {
  process.stderr.write(`error: ${why}\nusage: http-node --port P [--threads W]\n`);
  process.exit(2);
}

function options(argv) {
  let port = -1;
  let threads = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1];
    if (value === undefined || !/^[0-9]+$/.test(value)) usage(`${argv[i]} needs a number`);
    if (argv[i] === '--port') port = Number(value);
    else if (argv[i] === '--threads') threads = Number(value);
    else usage(`unknown argument ${argv[i]}`);
  }
  if (port < 0 || port > 65535) usage('--port P (0-65535) is required');
  if (threads < 1) usage('--threads must be at least 1');
  return { port, threads };
}

const PLAIN = Buffer.from('Hello, World!');
const JSON_BODY = Buffer.from(JSON.stringify({ message: 'Hello, World!' }));
const MISSING = Buffer.from('Not Found');

function send(res, status, type, body) {
  res.writeHead(status, { 'Server': 'node', 'Content-Type': type, 'Content-Length': body.length });
  res.end(body);
}

// Answers no sooner than `ms` after the request was handled (monotonic clock).
function delayed(res, ms) {
  const due = process.hrtime.bigint() + BigInt(ms) * 1000000n;
  const body = Buffer.from(String(ms));
  const check = () => {
    const early = due - process.hrtime.bigint();
    if (early > 0n) setTimeout(check, Math.ceil(Number(early) / 1e6));
    else send(res, 200, 'text/plain', body);
  };
  setTimeout(check, ms);
}

function handle(req, res) {
  const q = req.url.indexOf('?');
  const path = q < 0 ? req.url : req.url.slice(0, q);
  if (path === '/plaintext') return send(res, 200, 'text/plain', PLAIN);
  if (path === '/json') return send(res, 200, 'application/json', JSON_BODY);
  const m = /^\/delay\/([0-9]{1,9})$/.exec(path);
  if (m) return delayed(res, Number(m[1]));
  return send(res, 404, 'text/plain', MISSING);
}

function serve(port) {
  const server = http.createServer({ noDelay: true }, handle);
  server.on('error', (err) => {
    process.stderr.write(`http-node: listen on 127.0.0.1:${port}: ${err.message}\n`);
    process.exit(1);
  });
  server.listen({ host: '127.0.0.1', port, backlog: 4096 });
}

const { port, threads } = options(process.argv.slice(2));
if (threads === 1) {
  serve(port);
} else if (cluster.isPrimary) {
  let stopping = false;
  for (let i = 0; i < threads; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    process.stderr.write(`http-node: worker ${worker.process.pid} exited (${signal || code})\n`);
    process.exitCode = 1;
  });
  const stop = () => {
    stopping = true;
    for (const id in cluster.workers) cluster.workers[id].process.kill('SIGTERM');
    process.exit(process.exitCode || 0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  process.on('disconnect', () => process.exit(0)); // the primary is gone
  serve(port);
}
