'use strict';
// pg-node: the pg suite's Node.js peer (docs/workloads.md, "pg"; bench/peers/pg/README.md).
// node-postgres (`pg` from npm, package-lock.json beside this file), pure JavaScript
// (no pg-native), default type parsers, rows as objects:
//   roundtrip      10,000 `await client.query({name, text, values: [id]})`, one after the other
//   pipelined_10k  the same 10,000 queries started together and awaited with Promise.all,
//                  on a client made with `pipeline: true` (pg's pipelining: every query is
//                  written at once; without it pg sends one, waits for its answer, sends the next)
//   fetch_100k     one `client.query({name, text})` returning 100,000 rows, every column read
//
//   node bench.js --url postgres://user:pw@127.0.0.1:P/db [--threads N] [--samples N]
//                 [--warmup N] [--scenario roundtrip,pipelined_10k,fetch_100k]
// --threads is recorded only: a Node process runs JavaScript on one thread.
const { Client } = require('pg');
const PG_VERSION = require('pg/package.json').version;

const SCENARIOS = ['roundtrip', 'pipelined_10k', 'fetch_100k'];
const ROUNDTRIP_QUERIES = 10000;
const PIPELINED_QUERIES = 10000;
const FETCH_ROWS = 100000;
const POINT_SQL = 'SELECT id, name, price FROM items WHERE id = $1';
const FETCH_SQL = 'SELECT id, name, category, price, quantity, active, rating_score, rating_count ' +
  'FROM items WHERE id <= 100000';

function itemId(k) { return 1 + (k * 7919) % 100000; }

function usage(why) {
  process.stderr.write(`pg-node: ${why}\nusage: pg-node --url URL [--threads N] [--samples N] [--warmup N] [--scenario A,B]\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { url: '', threads: 1, samples: 5, warmup: 1, scenarios: null };
  for (let i = 0; i < argv.length; i += 2) {
    const v = argv[i + 1];
    if (v === undefined) usage(`${argv[i]} takes a value`);
    switch (argv[i]) {
      case '--url': a.url = v; break;
      case '--threads': a.threads = Number(v); break;
      case '--samples': a.samples = Number(v); break;
      case '--warmup': a.warmup = Number(v); break;
      case '--scenario': a.scenarios = v.split(','); break;
      default: usage(`unknown flag ${argv[i]}`);
    }
  }
  if (!a.url) usage('--url is required');
  if (!(a.samples >= 1) || !(a.warmup >= 0)) usage('--samples must be at least 1, --warmup at least 0');
  for (const s of a.scenarios || []) if (s !== 'all' && !SCENARIOS.includes(s)) usage(`unknown scenario ${s}`);
  return a;
}

class Meter {
  constructor() { this.cpu0 = process.cpuUsage(); this.t0 = process.hrtime.bigint(); }
  stop(s) {
    s.wall_s = Number(process.hrtime.bigint() - this.t0) / 1e9;
    const c = process.cpuUsage(this.cpu0);  // getrusage(RUSAGE_SELF): every thread of the process
    s.cpu_user_s = c.user / 1e6;
    s.cpu_sys_s = c.system / 1e6;
  }
}

function pointSum(row, want) {
  if (row.id !== want) throw new Error(`asked for id ${want}, got ${row.id}`);
  return row.id + row.price + row.name.length;
}

const point = (id) => ({ name: 'point', text: POINT_SQL, values: [id] });

async function roundtrip(client, s) {
  const m = new Meter();
  for (let k = 0; k < ROUNDTRIP_QUERIES; k++) {
    const id = itemId(k);
    const t0 = process.hrtime.bigint();
    const r = await client.query(point(id));
    s.latencies_ns.push(Number(process.hrtime.bigint() - t0));
    if (r.rows.length !== 1) throw new Error(`id ${id}: ${r.rows.length} rows`);
    s.checksum += pointSum(r.rows[0], id);
  }
  m.stop(s);
}

async function pipelined(client, s) {
  const m = new Meter();
  const ids = [];
  for (let k = 0; k < PIPELINED_QUERIES; k++) ids.push(itemId(k));
  const results = await Promise.all(ids.map((id) => client.query(point(id))));
  for (let k = 0; k < results.length; k++) {
    if (results[k].rows.length !== 1) throw new Error(`id ${ids[k]}: ${results[k].rows.length} rows`);
    s.checksum += pointSum(results[k].rows[0], ids[k]);
  }
  m.stop(s);
}

async function fetch(client, s) {
  const m = new Meter();
  const r = await client.query({ name: 'fetch', text: FETCH_SQL });
  if (r.rows.length !== FETCH_ROWS) throw new Error(`${r.rows.length} rows, want ${FETCH_ROWS}`);
  for (const row of r.rows) {
    s.checksum += row.id + row.price + row.quantity + row.rating_score + row.rating_count +
      row.name.length + row.category.length + (row.active ? 1 : 0);
  }
  m.stop(s);
}

function median(v) {
  const s = [...v].sort((x, y) => x - y);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}
function medianIndex(v) {
  const idx = v.map((_, i) => i).sort((x, y) => v[x] - v[y]);
  return idx[Math.floor((idx.length - 1) / 2)];
}
function nearestRank(sorted, p) {
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

function report(name, threads, perSample, got) {
  const rates = got.map((s) => perSample / s.wall_s);
  const mid = got[medianIndex(rates)];
  const total = perSample * got.length;
  const user = got.reduce((a, s) => a + s.cpu_user_s, 0);
  const sys = got.reduce((a, s) => a + s.cpu_sys_s, 0);
  const rec = { suite: 'pg', scenario: name, runtime: 'node', threads, samples: got.length, wall_s: mid.wall_s };
  if (name === 'fetch_100k') {
    Object.assign(rec, { queries: 1, rows: perSample, rows_per_sec: median(rates),
      cpu_ns_per_row: (user + sys) * 1e9 / total });
  } else {
    Object.assign(rec, { queries: perSample, rows: perSample, ops_per_sec: median(rates),
      cpu_us_per_query: (user + sys) * 1e6 / total });
  }
  Object.assign(rec, { cpu_user_s: user, cpu_sys_s: sys });
  if (mid.latencies_ns.length) {
    const lat = [...mid.latencies_ns].sort((x, y) => x - y);
    Object.assign(rec, { p50_us: nearestRank(lat, 50) / 1e3, p99_us: nearestRank(lat, 99) / 1e3 });
  }
  rec.driver = `pg ${PG_VERSION}`;
  rec.checksum = mid.checksum;
  process.stdout.write(JSON.stringify(rec) + '\n');
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const wants = (n) => !a.scenarios || a.scenarios.includes(n) || a.scenarios.includes('all');
  const client = new Client({ connectionString: a.url });
  const piped = new Client({ connectionString: a.url, pipeline: true });
  await client.connect();
  await piped.connect();
  const table = [['roundtrip', roundtrip, client, ROUNDTRIP_QUERIES],
    ['pipelined_10k', pipelined, piped, PIPELINED_QUERIES], ['fetch_100k', fetch, client, FETCH_ROWS]];
  for (const [name, fn, c, perSample] of table) {
    if (!wants(name)) continue;
    const got = [];
    let reference = null;
    for (let i = 0; i < a.warmup + a.samples; i++) {
      const s = { wall_s: 0, cpu_user_s: 0, cpu_sys_s: 0, checksum: 0, latencies_ns: [] };
      await fn(c, s);
      if (reference === null) reference = s.checksum;
      else if (s.checksum !== reference) throw new Error(`${name}: checksum ${s.checksum} differs from the first run's ${reference}`);
      if (i >= a.warmup) got.push(s);
    }
    report(name, a.threads, perSample, got);
  }
  await client.end();
  await piped.end();
}

main().catch((e) => {
  process.stderr.write(`pg-node: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
