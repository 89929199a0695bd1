'use strict';
// arena-node: the `arena` suite's peer on Node.js (bench/peers/arena/README.md), written
// the way a Node user deploys a plain-core service: node:http (and node:https for the
// TLS port), node:cluster for several cores, node:zlib for compression, node:fs for the
// static files, and the `ws` package (Debian's node-ws) for WebSocket. Started by the
// arena-node wrapper:
//
//   node server.js --port P --threads W --data DIR [--tls-port Q --tls-cert CRT --tls-key KEY]
//
// W > 1: a cluster primary forks W workers sharing the listening sockets (on Linux the
// primary accepts and hands connections round-robin to the workers, cluster's default).
// W = 1: one plain process. Every process exits with status 0 on SIGTERM. See README.md.
const cluster = require('node:cluster');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const path = require('node:path');
const zlib = require('node:zlib');

function usage(why) {
  process.stderr.write(`arena-node: ${why}\nusage: arena-node --port P --threads W --data DIR ` +
                       '[--tls-port Q --tls-cert CRT --tls-key KEY]\n');
  process.exit(2);
}

function options(argv) {
  const o = { port: -1, threads: 1, data: '', tlsPort: 0, tlsCert: '', tlsKey: '' };
  const names = { '--port': 'port', '--threads': 'threads', '--data': 'data', '--tls-port': 'tlsPort',
                  '--tls-cert': 'tlsCert', '--tls-key': 'tlsKey' };
  for (let i = 0; i < argv.length; i += 2) {
    const key = names[argv[i]];
    const value = argv[i + 1];
    if (!key) usage(`unknown argument ${argv[i]}`);
    if (value === undefined) usage(`${argv[i]} needs a value`);
    if (typeof o[key] === 'number') {
      if (!/^[0-9]+$/.test(value)) usage(`${argv[i]} needs a number`);
      o[key] = Number(value);
    } else {
      o[key] = value;
    }
  }
  if (o.port < 0 || o.port > 65535) usage('--port P (0-65535) is required');
  if (o.threads < 1) usage('--threads must be at least 1');
  if (!o.data) usage('--data DIR is required');
  if (o.tlsPort > 65535) usage('--tls-port must be 0-65535');
  if (o.tlsPort > 0 && (!o.tlsCert || !o.tlsKey)) usage('--tls-port needs --tls-cert and --tls-key');
  return o;
}

const opts = options(process.argv.slice(2));

// ------------------------------------------------------------------ helpers
function send(res, status, type, body, extra) {
  const headers = { 'Content-Type': type, 'Content-Length': body.length };
  if (extra) Object.assign(headers, extra);
  res.writeHead(status, headers);
  res.end(body);
}

function notFound(res) {
  send(res, 404, 'text/plain', 'Not Found');
}

function int(s, dflt) {
  const n = Number.parseInt(s, 10);
  return Number.isNaN(n) ? dflt : n;
}

// Accept-Encoding → the codings we have (br, gzip) the client accepts, best first: by q
// (q=0 means "not acceptable", `*` stands for the codings not named), br first on a tie.
// No header, or neither acceptable → [] (identity).
function acceptable(header) {
  if (!header) return [];
  let br = -1, gzip = -1, star = -1;
  for (const part of header.split(',')) {
    const fields = part.split(';');
    const name = fields[0].trim().toLowerCase();
    let q = 1;
    for (let i = 1; i < fields.length; i++) {
      const p = fields[i].trim();
      if (p.length > 2 && (p[0] === 'q' || p[0] === 'Q') && p[1] === '=') {
        q = Number(p.slice(2));
        if (Number.isNaN(q)) q = 0;
      }
    }
    if (name === 'br') br = q;
    else if (name === 'gzip' || name === 'x-gzip') gzip = Math.max(gzip, q);
    else if (name === '*') star = q;
  }
  if (br < 0) br = star;
  if (gzip < 0) gzip = star;
  const out = [];
  if (br > 0 && br >= gzip) out.push('br');
  if (gzip > 0) out.push('gzip');
  if (br > 0 && br < gzip) out.push('br');
  return out;
}

// ------------------------------------------------------------------ data (read once at start)
const dataset = JSON.parse(fs.readFileSync(path.join(opts.data, 'dataset.json'), 'utf8'));
const staticDir = path.join(opts.data, 'static');

// ------------------------------------------------------------------ routes
function baseline(req, res, query) {
  const q = new URLSearchParams(query);
  const sum = int(q.get('a'), 0) + int(q.get('b'), 0);
  if (req.method === 'GET' || req.method === 'HEAD') return send(res, 200, 'text/plain', String(sum));
  if (req.method !== 'POST') return send(res, 405, 'text/plain', 'Method Not Allowed');
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    send(res, 200, 'text/plain', String(sum + int(Buffer.concat(chunks).toString('latin1').trim(), 0)));
  });
}

// Responses under 1 KiB stay uncompressed, as with Node's compression middlewares
// (compression, koa-compress, @fastify/compress: threshold 1024 bytes).
const COMPRESS_MIN = 1024;
const GZIP_OPTS = { level: zlib.constants.Z_DEFAULT_COMPRESSION }; // 6, zlib's and Node's default
const BROTLI_QUALITY = 4; // koa-compress's and @fastify/compress's default brotli quality

function json(req, res, countText, query) {
  const count = Math.min(Math.max(int(countText, 1), 1), 50, dataset.length);
  const m = int(new URLSearchParams(query).get('m'), 1);
  const items = [];
  for (let i = 0; i < count; i++) {
    const it = dataset[i];
    items.push({ ...it, total: it.price * it.quantity * m });
  }
  let body = Buffer.from(JSON.stringify({ items, count }));
  const headers = { 'Content-Type': 'application/json', 'Vary': 'Accept-Encoding' };
  const coding = body.length >= COMPRESS_MIN ? acceptable(req.headers['accept-encoding'])[0] : undefined;
  if (coding === 'br') {
    body = zlib.brotliCompressSync(body, { params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    headers['Content-Encoding'] = 'br';
  } else if (coding === 'gzip') {
    body = zlib.gzipSync(body, GZIP_OPTS);
    headers['Content-Encoding'] = 'gzip';
  }
  headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.end(body);
}

function upload(req, res) {
  if (req.method !== 'POST') return send(res, 405, 'text/plain', 'Method Not Allowed');
  let n = 0;
  req.on('data', (c) => { n += c.length; });
  req.on('end', () => send(res, 200, 'text/plain', String(n)));
}

const MIME = {
  '.css': 'text/css', '.js': 'application/javascript', '.json': 'application/json',
  '.html': 'text/html', '.svg': 'image/svg+xml', '.webp': 'image/webp', '.woff2': 'font/woff2',
  '.txt': 'text/plain', '.png': 'image/png', '.jpg': 'image/jpeg', '.ico': 'image/x-icon',
};
// Files that get no .br/.gz sibling lookup (already compressed formats).
const BINARY = new Set(['.webp', '.woff2', '.png', '.jpg', '.ico']);

// Per request, from disk, as serve-static/send does it: stat the file to send (the
// precompressed sibling the client accepts first, like @fastify/static's preCompressed or
// express-static-gzip), then stream it with fs.createReadStream.
function serveStatic(req, res, name) {
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain', 'Method Not Allowed');
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(name) || name.includes('..')) return notFound(res);
  const ext = path.extname(name);
  const file = path.join(staticDir, name);
  const type = MIME[ext] || 'application/octet-stream';
  const candidates = [];
  if (!BINARY.has(ext)) {
    for (const coding of acceptable(req.headers['accept-encoding'])) {
      candidates.push([coding === 'br' ? '.br' : '.gz', coding]);
    }
  }
  candidates.push(['', '']);
  const vary = BINARY.has(ext) ? null : { 'Vary': 'Accept-Encoding' };
  const attempt = (i) => {
    const [suffix, coding] = candidates[i];
    fs.stat(file + suffix, (err, st) => {
      if (err || !st.isFile()) {
        if (i + 1 < candidates.length) return attempt(i + 1);
        return notFound(res);
      }
      const headers = { 'Content-Type': type, 'Content-Length': st.size };
      if (coding) headers['Content-Encoding'] = coding;
      if (vary) Object.assign(headers, vary);
      res.writeHead(200, headers);
      if (req.method === 'HEAD') return res.end();
      const stream = fs.createReadStream(file + suffix);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    });
  };
  attempt(0);
}

function handle(req, res) {
  const url = req.url;
  const qi = url.indexOf('?');
  const p = qi < 0 ? url : url.slice(0, qi);
  const query = qi < 0 ? '' : url.slice(qi + 1);
  if (p === '/baseline11') return baseline(req, res, query);
  if (p === '/pipeline') return send(res, 200, 'text/plain', 'ok');
  if (p.startsWith('/json/')) {
    const c = p.slice(6);
    if (/^[0-9]+$/.test(c)) return json(req, res, c, query);
    return notFound(res);
  }
  if (p === '/upload') return upload(req, res);
  if (p.startsWith('/static/')) return serveStatic(req, res, p.slice(8));
  if (p === '/ws') return send(res, 426, 'text/plain', 'Upgrade Required', { 'Upgrade': 'websocket' });
  return notFound(res);
}

// ------------------------------------------------------------------ servers
function serve() {
  const WebSocket = require('ws');
  // No permessage-deflate (ws's server default), no pings: every frame sent is an echo.
  const wss = new WebSocket.WebSocketServer({ noServer: true });
  wss.on('connection', (ws) => {
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
  });
  const onUpgrade = (req, socket, head) => {
    socket.on('error', () => {});
    const qi = req.url.indexOf('?');
    if ((qi < 0 ? req.url : req.url.slice(0, qi)) !== '/ws') {
      socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    // ws also accepts the pre-RFC draft version 8 (hybi-08); RFC 6455 4.4 has a server
    // refuse any version but 13 with 426 and the version it speaks.
    if (req.headers['sec-websocket-version'] !== '13') {
      socket.end('HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\n' +
                 'Content-Length: 0\r\nConnection: close\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  const listen = (server, port, what) => {
    server.on('upgrade', onUpgrade);
    server.on('clientError', (err, socket) => {
      if (socket.writable && !socket.destroyed) socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    server.on('error', (err) => {
      process.stderr.write(`arena-node: ${what} listen on 127.0.0.1:${port}: ${err.message}\n`);
      process.exit(1);
    });
    server.listen({ host: '127.0.0.1', port, backlog: 4096 });
  };
  // Expect: 100-continue: node:http answers "100 Continue" itself when no
  // 'checkContinue' listener is installed, so curl sends its body at once.
  listen(http.createServer({ noDelay: true }, handle), opts.port, 'http');
  if (opts.tlsPort > 0) {
    const tlsOpts = { cert: fs.readFileSync(opts.tlsCert), key: fs.readFileSync(opts.tlsKey),
                      ALPNProtocols: ['http/1.1'], noDelay: true };
    const server = https.createServer(tlsOpts, handle);
    server.on('tlsClientError', () => {});
    listen(server, opts.tlsPort, 'https');
  }
}

if (opts.threads === 1) {
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
  serve();
} else if (cluster.isPrimary) {
  // SIGTERM: signal the workers, exit once they are gone (SIGKILL stragglers at 1.5 s).
  // A worker that ends first takes the whole server down: with status 0 if it exited 0
  // (it got SIGTERM itself, e.g. the runner signalled the process group), else with
  // status 1, so a broken run shows instead of going on with fewer workers.
  let stopping = false;
  let status = 0;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    const left = Object.values(cluster.workers);
    if (left.length === 0) process.exit(status);
    for (const w of left) w.process.kill('SIGTERM');
    setTimeout(() => {
      for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL');
      process.exit(status);
    }, 1500).unref();
  };
  for (let i = 0; i < opts.threads; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      if (code !== 0 || signal) {
        process.stderr.write(`arena-node: worker ${worker.process.pid} exited (${signal || code})\n`);
        status = 1;
      }
      stop();
    } else if (Object.keys(cluster.workers).length === 0) {
      process.exit(status);
    }
  });
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => process.exit(0));
  process.on('disconnect', () => process.exit(0)); // the primary is gone
  serve();
}
