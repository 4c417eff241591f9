/**
 * Writes the model's downloaded chunks into the browser's store (OPFS) on a thread of its own, so that a first
 * visit's fetches, hashing and copies go on while a chunk is written (loader.js's FolderStore starts it, hands it each
 * chunk's buffer and ends it once the model is kept). Requests are {id, type: 'write', name, bytes}; answers are
 * bridge.js's reply(): {id, type: 'done', result: written} or {id, type: 'error', error} with a LoadError's code.
 */

import { reply } from './bridge.js';
import { STORE_NAME, writeFile } from './loader.js';

const folder = navigator.storage.getDirectory().then((root) => root.getDirectoryHandle(STORE_NAME, { create: true }));

// The answer says whether the chunk was written: false where another tab holds its file (it is then that tab's).
self.onmessage = ({ data: { id, name, bytes } }) => reply(id, async () => writeFile(await folder, name, bytes));
