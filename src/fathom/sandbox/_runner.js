// The JavaScript runner that runs INSIDE the sandbox (started by _bootstrap.py after the OS limits and
// the uid drop). FastGPT contract: the code defines `main(variables)` (sync or async); the result is
// {codeReturn, log}. User code runs in a separate vm context without require/process: that is defence
// in depth only; the OS isolation around this process is the boundary.
'use strict';
const vm = require('vm');
const crypto = require('crypto');
const readline = require('readline');

const cfg = JSON.parse(process.env.FATHOM_SANDBOX_CFG || '{}');
delete process.env.FATHOM_SANDBOX_CFG;
const maxOutput = cfg.output_bytes || 1048576;
const maxRequests = cfg.max_requests || 30;

function send(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

send({ type: 'ready' });
const rl = readline.createInterface({ input: process.stdin, terminal: false });
const pending = new Map();
let job = null;
let nextId = 0;
let requestCount = 0;

rl.on('line', (line) => {
  if (job === null) {
    job = JSON.parse(line || '{}');
    run(job).then(
      (message) => finish(message),
      (err) => finish({ type: 'result', success: false, message: errorMessage(err) })
    );
    return;
  }
  const reply = JSON.parse(line);
  const waiter = pending.get(reply.id);
  if (!waiter) return;
  pending.delete(reply.id);
  if (reply.ok) waiter.resolve(reply.response);
  else waiter.reject(new Error(String(reply.error || 'HTTP request failed')));
});

function finish(message) {
  process.stdout.write(JSON.stringify(message) + '\n', () => process.exit(0));
}

function errorMessage(err) {
  if (err && typeof err === 'object' && 'message' in err) return String(err.message);
  return String(err);
}

class OutputLimit extends Error {}

async function run(job) {
  const logs = [];
  let logSize = 0;
  const log = (...args) => {
    const text = args.map((a) => (typeof a === 'object' && a !== null ? JSON.stringify(a) : String(a))).join(' ');
    logSize += text.length + 1;
    if (logSize > maxOutput) throw new OutputLimit(`Output limit exceeded (${maxOutput} bytes)`);
    logs.push(text);
  };
  const SystemHelper = {
    countToken: (text) => Math.ceil(String(text).length / 4),
    strToBase64: (str, prefix = '') => prefix + Buffer.from(String(str), 'utf-8').toString('base64'),
    createHmac: (algorithm, secret) => {
      const timestamp = Date.now().toString();
      const hmac = crypto.createHmac(algorithm, secret);
      hmac.update(timestamp + '\n' + secret, 'utf8');
      return { timestamp, sign: encodeURIComponent(hmac.digest('base64')) };
    },
    delay: (ms) => {
      if (ms > 10000) throw new Error('Delay must be <= 10000ms');
      return new Promise((resolve) => setTimeout(resolve, ms));
    },
    httpRequest: (url, opts = {}) => {
      if (++requestCount > maxRequests) return Promise.reject(new Error(`Request limit exceeded: max ${maxRequests}`));
      const id = ++nextId;
      const request = {
        url: String(url),
        method: opts.method || 'GET',
        headers: opts.headers || {},
        body: opts.body === undefined ? null : opts.body,
        timeout: opts.timeout || null,
      };
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        send({ type: 'http_request', id, request });
      });
    },
  };
  const sandbox = {
    console: { log, info: log, warn: log, error: log, debug: log },
    SystemHelper,
    countToken: SystemHelper.countToken,
    strToBase64: SystemHelper.strToBase64,
    createHmac: SystemHelper.createHmac,
    delay: SystemHelper.delay,
    httpRequest: SystemHelper.httpRequest,
    setTimeout,
    clearTimeout,
    __input: JSON.stringify(job.variables || {}),
  };
  if (cfg.guards === false) {
    // Test mode for the OS layer only: hand the code Node's own powers, as a vm escape would.
    sandbox.require = require;
    sandbox.process = process;
  }
  const codeGeneration = cfg.guards === false ? { strings: true, wasm: true } : { strings: false, wasm: false };
  const context = vm.createContext(sandbox, { codeGeneration });
  try {
    new vm.Script(String(job.code || ''), { filename: 'sandbox.js' }).runInContext(context);
    const variables = vm.runInContext('JSON.parse(__input)', context);
    if (typeof context.main !== 'function') throw new Error("No 'main' function defined");
    const result = await context.main(variables);
    const codeReturn = result === undefined ? null : JSON.parse(JSON.stringify(result));
    return { type: 'result', success: true, data: { codeReturn, log: logs.join('\n') } };
  } catch (err) {
    if (err instanceof OutputLimit) return { type: 'result', success: false, message: err.message, reason: 'output' };
    if (err instanceof RangeError && /allocation|heap|memory/i.test(err.message)) {
      return { type: 'result', success: false, message: 'Memory limit exceeded', reason: 'memory' };
    }
    return { type: 'result', success: false, message: errorMessage(err) };
  }
}
