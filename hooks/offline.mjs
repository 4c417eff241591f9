/**
 * Writes the site's service worker: Workbox's injectManifest lists every file of the build with a
 * revision hash into the template's `self.__WB_MANIFEST`. Run by hooks/offline.py as
 * `node hooks/offline.mjs SITE_DIR TEMPLATE IGNORE_JSON`; prints {count, size, warnings} as JSON.
 */
import { injectManifest } from 'workbox-build';

const [site, template, ignore] = process.argv.slice(2);
const { count, size, warnings } = await injectManifest({
  swSrc: template,
  swDest: `${site}/sw.js`,
  globDirectory: site,
  globPatterns: ['**/*'],
  globIgnores: JSON.parse(ignore),
  // The largest precached file is KaTeX's or the search index, far below this; the runtimes and the
  // model, which are larger, are cached when first used instead (see hooks/sw.js).
  maximumFileSizeToCacheInBytes: 16 * 1024 * 1024,
});
console.log(JSON.stringify({ count, size, warnings }));
