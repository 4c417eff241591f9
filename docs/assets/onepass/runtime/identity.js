/** What a cached result or a precomputed trace is tied to: the hashes of the model's files (manifest.json). */
export function modelIdentity(manifest) {
  return manifest.files.map((f) => f.sha256).join(':');
}
