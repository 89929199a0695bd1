// tls-node: the `tls` suite's server on Node.js's tls module (OpenSSL), a TLS echo:
// every byte read is written back (socket.pipe). W worker processes through the cluster
// module, as Node services use every CPU; the primary only forks, and hands every worker
// the same session-ticket keys (tls's ticketKeys, as Node's documentation says to do for
// several servers), so a session resumes on whichever worker the next connection lands.
// See README.md.
'use strict';
const cluster = require('cluster');
const fs = require('fs');
const tls = require('tls');
const crypto = require('crypto');

function arg(name, dflt) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : dflt;
}
const port = Number(arg('--port', ''));
const threads = Number(arg('--threads', '1'));
const cert = arg('--tls-cert', ''), key = arg('--tls-key', '');
if (!Number.isInteger(port) || port < 0 || port > 65535 || !(threads >= 1) || !cert || !key) {
  console.error('usage: tls-node --port P [--threads W] --tls-cert CERT.pem --tls-key KEY.pem');
  process.exit(2);
}

if (cluster.isPrimary && threads > 1) {
  const keys = crypto.randomBytes(48).toString('hex');
  for (let i = 0; i < threads; ++i) cluster.fork({TLS_NODE_TICKET_KEYS: keys});
  cluster.on('exit', () => process.exit(1));
  for (const sig of ['SIGTERM', 'SIGINT'])
    process.on(sig, () => { for (const id in cluster.workers) cluster.workers[id].kill(); process.exit(0); });
} else {
  const opts = {cert: fs.readFileSync(cert), key: fs.readFileSync(key), minVersion: 'TLSv1.2'};
  if (process.env.TLS_NODE_TICKET_KEYS) opts.ticketKeys = Buffer.from(process.env.TLS_NODE_TICKET_KEYS, 'hex');
  const server = tls.createServer(opts,
                                  (s) => { s.setNoDelay(true); s.on('error', () => {}); s.pipe(s); });
  server.on('tlsClientError', () => {});
  server.listen(port, '127.0.0.1');
}
