// Connect / one statement / close, in N concurrent loops, for a fixed time: what a PHP worker, a serverless function
// or a pool that recycles connections does to a MySQL endpoint. Prints one JSON line: logins completed per second,
// the login time (TCP connect, TLS if asked, handshake and authentication) at p50/p99/max, and the errors by message.
//
// Usage: node churn.mjs HOST PORT USER PASSWORD DATABASE CONCURRENCY SECONDS plain|tls
import mysql from 'mysql2';

const [host, port, user, password, database, concurrencyText, secondsText, clientTls] = process.argv.slice(2);
const concurrency = Number(concurrencyText);
const seconds = Number(secondsText);
if (!host || !Number.isInteger(Number(port)) || !(concurrency >= 1) || !(seconds > 0)
    || !['plain', 'tls'].includes(clientTls)) {
  console.error('usage: node churn.mjs HOST PORT USER PASSWORD DATABASE CONCURRENCY SECONDS plain|tls');
  process.exit(2);
}

const options = {
  host, port: Number(port), user, password, database,
  // The benchmark's certificates are self-signed: encrypt, do not verify (as `mariadb --ssl` without a CA).
  ...(clientTls === 'tls' ? { ssl: { rejectUnauthorized: false } } : {}),
};
const loginMicros = [];
const errors = new Map();
let completed = 0;
const deadline = process.hrtime.bigint() + BigInt(Math.round(seconds * 1e9));
const started = process.hrtime.bigint();

function failed(err) {
  const key = err && (err.code || err.message) || String(err);
  errors.set(key, (errors.get(key) || 0) + 1);
}

function loop(done) {
  if (process.hrtime.bigint() >= deadline) {
    done();
    return;
  }
  const begin = process.hrtime.bigint();
  const connection = mysql.createConnection(options);
  connection.once('error', failed);
  connection.connect((err) => {
    if (err) {
      failed(err);
      connection.destroy();
      setImmediate(loop, done);
      return;
    }
    loginMicros.push(Number(process.hrtime.bigint() - begin) / 1000);
    connection.query('SELECT 1', (queryErr) => {
      if (queryErr) {
        failed(queryErr);
        connection.destroy();
        setImmediate(loop, done);
        return;
      }
      connection.end((endErr) => {
        if (endErr) {
          failed(endErr);
        } else {
          completed++;
        }
        loop(done);
      });
    });
  });
}

await Promise.all(Array.from({ length: concurrency }, () => new Promise((resolve) => loop(resolve))));
const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
loginMicros.sort((a, b) => a - b);
const at = (q) => loginMicros.length ? loginMicros[Math.min(loginMicros.length - 1, Math.floor(q * loginMicros.length))] : 0;
console.log(JSON.stringify({
  logins_per_s: Math.round(completed / elapsed),
  completed,
  seconds: Number(elapsed.toFixed(2)),
  login_ms_p50: Number((at(0.5) / 1000).toFixed(2)),
  login_ms_p99: Number((at(0.99) / 1000).toFixed(2)),
  login_ms_max: Number((at(1) / 1000).toFixed(2)),
  errors: Object.fromEntries(errors),
}));
