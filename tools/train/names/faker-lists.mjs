// Prints the word lists of @faker-js/faker's locale definitions (dist/*-*.js) as one JSON object:
// {"first": [...], "last": [...], "place": [...], "company_suffix": [...]}, each sorted, unique.
// usage: node faker-lists.mjs FAKER_PACKAGE/dist
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const out = { first: new Set(), last: new Set(), place: new Set(), company_suffix: new Set() };
const add = (set, v) => { if (Array.isArray(v)) v.forEach(x => typeof x === 'string' ? set.add(x) : add(set, x)); else if (v && typeof v === 'object') Object.values(v).forEach(x => add(set, x)); };
for (const f of readdirSync(dir).filter(f => f.endsWith('.js') && f.includes('-')).sort()) {
  let m; try { m = await import(`${dir}/${f}`); } catch { continue; }
  for (const d of Object.values(m)) {
    if (!d || typeof d !== 'object' || !(d.person || d.location || d.company)) continue;
    add(out.first, d.person?.first_name); add(out.last, d.person?.last_name);
    add(out.place, d.location?.city_name); add(out.place, d.location?.country); add(out.place, d.location?.state);
    add(out.company_suffix, d.company?.legal_entity_type); add(out.company_suffix, d.company?.suffix);
  }
}
const o = {}; for (const k in out) o[k] = [...out[k]].sort();
console.log(JSON.stringify(o));
