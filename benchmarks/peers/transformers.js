// The page side of the transformers.js peer: one module worker owns the library and the session, as ours does.
const worker = new Worker('transformers-worker.js', { type: 'module' });
const waiting = new Map();
let next = 0;

worker.onmessage = ({ data }) => {
  const { resolve, reject } = waiting.get(data.id);
  waiting.delete(data.id);
  if (data.error) reject(new Error(data.error));
  else resolve(data.result);
};

function call(op, args) {
  const id = next++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    worker.postMessage({ id, op, args });
  });
}

window.peer = { load: (threads) => call('load', { threads }), bench: (args) => call('bench', args) };
