/**
 * Writes the model's downloaded chunks into the browser's store (OPFS) on a thread of its own, so that a first
 * visit's fetches, hashing and copies go on while a chunk is written (loader.js's FolderStore starts it, hands it each
 * chunk's buffer and ends it once the model is kept). Requests are {id, type: 'write', name, bytes}; answers are
 * loader.js's own: {id, type: 'done'} or {id, type: 'error', error} with a LoadError's code where there is one.
 */

import { STORE_NAME, writeFile } from './loader.js';

const folder = navigator.storage.getDirectory().then((root) => root.getDirectoryHandle(STORE_NAME, { create: true }));

self.onmessage = async ({ data: { id, name, bytes } }) => {
  try {
    await writeFile(await folder, name, bytes);
    self.postMessage({ id, type: 'done', result: null });
  } catch (err) {
    self.postMessage({ id, type: 'error', error: { message: err.message, code: err.code } });
  }
};
