/**
 * Results of finished runs, keyed by the model's identity, the panel and its request: a repeat costs nothing.
 * Kept in memory for the visit (modules survive instant navigation) and in sessionStorage for reloads.
 */
import { identity } from './model.js';

const STORAGE_KEY = 'onepass.results';
const MAX_ENTRIES = 40; // old entries go first; sessionStorage holds a few MB per site
const memory = new Map(load());

function load() {
  try {
    return JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? '[]');
  } catch {
    return [];
  }
}

function save() {
  while (memory.size > MAX_ENTRIES) memory.delete(memory.keys().next().value);
  try {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify([...memory]));
  } catch {
    // Full or switched off: the in-memory copy still serves this visit.
  }
}

async function key(panel, request) {
  return JSON.stringify([await identity(), panel, request]);
}

async function cached(panel, request) {
  return memory.get(await key(panel, request)) ?? null;
}

async function remember(panel, request, recording) {
  const k = await key(panel, request);
  memory.delete(k);
  memory.set(k, recording);
  save();
}

/** The remembered result of (panel, request), else `live()`'s, remembered for next time; `fromCache` says which. */
export async function cachedOr(panel, request, live) {
  const hit = await cached(panel, request);
  if (hit) return { value: hit, fromCache: true };
  const value = await live();
  await remember(panel, request, value);
  return { value, fromCache: false };
}
