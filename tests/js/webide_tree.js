#!/usr/bin/env node
// Parse a file as the Kaitai Web IDE does and print the object tree's node labels as JSON.
//
// Usage: NODE_PATH=.tools/npm/node_modules node tests/js/webide_tree.js [--eager] MAIN.ksy FILE.bin...
//   --eager: evaluate every instance, as the IDE's eager mode does (or as opening each lazy
//   instance node does); without it, lazy instances are left out.
//
// A model of kaitai_struct_webide (master), written from reading its sources, not copied:
//   - compile: src/v1/KaitaiServices.ts (CompilerService.compile, JsImporter): the npm compiler
//     in debug mode; every spec it loads, the main one first and then each import in the order
//     the compiler asks for it, is added to one flat map of types by JavaScript class name
//     (SchemaUtils.collectKsyTypes), so two types called `attributes` share one entry;
//   - parse and export: src/v1/kaitaiWorker.ts (reparse, exportValue): `_read()` with the error
//     caught, fields are own keys and `_debug` keys, instances already evaluated and value
//     instances (unless `-webide-parse-mode: lazy`) are shown as fields, the others stay
//     lazy; enum names come from `_debug.enumName`;
//   - labels: src/v1/parsedToTree.ts (childItemToNode, reprObject, primitiveToText): an
//     object's node reads `name [Class]: summary`, the summary being its type's
//     `-webide-representation` with each `{path:format}` filled in.
// Output, one entry per file, in argument order:
//   [{"file", "error": the parse's exception or null, "imports": [spec ids in load order],
//     "nodes": [{"path", "class", "text", "unresolved": [refs that found nothing],
//                "validation_error", "instance_error", "incomplete"}]}]
// Labels are plain text (the IDE's HTML markup and escaping left out).
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const yaml = require('js-yaml');
const KaitaiStream = require('kaitai-struct/KaitaiStream');
const compiler = require('kaitai-struct-compiler');

const ucFirst = (s) => s.charAt(0).toUpperCase() + s.slice(1);
const jsName = (ksyName, isProp) =>
  ksyName.split('_').map((w, i) => (i === 0 && isProp ? w : ucFirst(w))).join('');

// SchemaUtils.collectTypes: nested types by class name (flat, last one wins), instances by
// their JavaScript property name.
function collectTypes(types, parent) {
  for (const [name, sub] of Object.entries(parent.types || {})) {
    types[jsName(name, false)] = sub;
    collectTypes(types, sub);
  }
  parent.instancesByJsName = {};
  for (const [name, inst] of Object.entries(parent.instances || {})) {
    parent.instancesByJsName[jsName(name, true)] = inst;
  }
}

function collectKsyTypes(spec) {
  const types = {};
  collectTypes(types, spec);
  types[jsName(spec.meta.id, false)] = spec;
  return types;
}

async function build(mainKsy) {
  const dir = path.dirname(path.resolve(mainKsy));
  const load = (file) => yaml.load(fs.readFileSync(file, 'utf8'));
  const main = load(mainKsy);
  const ksyTypes = collectKsyTypes(main);
  const imports = [];
  const importer = {
    importYaml(name) {
      const file = path.join(dir, `${name}.ksy`);
      imports.push(name);
      Object.assign(ksyTypes, collectKsyTypes(load(file)));
      return Promise.resolve(load(file)); // a fresh copy for the compiler, as the IDE does
    },
  };
  const files = await compiler.compile('javascript', load(mainKsy), importer, true);
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'webide-'));
  for (const [name, src] of Object.entries(files)) fs.writeFileSync(path.join(out, name), src);
  const top = jsName(main.meta.id, false);
  return { out, top, ksyTypes, imports };
}

function exportValue(ctx, obj, debug, p, noLazy) {
  const res = {
    path: p,
    type: obj instanceof Uint8Array ? 'bytes'
      : obj === undefined ? 'undefined'
        : obj === null || typeof obj !== 'object' ? 'primitive'
          : Array.isArray(obj) ? 'array' : 'object',
    validationError: debug && debug.validationError ? String(debug.validationError.message || debug.validationError) : null,
    incomplete: Boolean(debug && debug.start != null && debug.end == null),
  };
  if (res.type === 'bytes') res.bytes = obj;
  else if (res.type === 'primitive' || res.type === 'undefined') {
    res.value = obj;
    if (debug && debug.enumName) {
      const [mod, ...rest] = debug.enumName.split('.');
      let e = require(path.join(ctx.out, `${mod}.js`))[mod];
      for (const k of rest) e = e[k];
      res.enumString = e[obj];
    }
  } else if (res.type === 'array') {
    res.items = obj.map((item, i) => exportValue(ctx, item, debug && debug.arr && debug.arr[i], p.concat(String(i)), noLazy));
  } else {
    res.cls = obj.constructor.name;
    res.fields = {};
    const ksyType = ctx.ksyTypes[res.cls];
    const names = new Set(Object.keys(obj));
    if (obj._debug) Object.keys(obj._debug).forEach((k) => names.add(k));
    for (const k of names) {
      if (k[0] !== '_') res.fields[k] = exportValue(ctx, obj[k], obj._debug && obj._debug[k], p.concat(k), noLazy);
    }
    const props = Object.getOwnPropertyNames(obj.constructor.prototype)
      .filter((x) => x[0] !== '_' && x !== 'constructor' && x !== 'toString');
    for (const prop of props) {
      const inst = (ksyType && ksyType.instancesByJsName && ksyType.instancesByJsName[prop]) || {};
      const mode = inst['-webide-parse-mode'];
      const eager = noLazy || mode === 'eager' || (mode !== 'lazy' && inst.value);
      if (!Object.prototype.hasOwnProperty.call(obj, `_m_${prop}`) && !eager) continue;
      let value;
      let err = null;
      try {
        value = obj[prop];
      } catch (e) {
        err = e;
      }
      const ex = exportValue(ctx, value, obj._debug[`_m_${prop}`], p.concat(prop), noLazy);
      if (err) ex.instanceError = String(err.message || err);
      res.fields[prop] = ex;
    }
  }
  return res;
}

function primitiveText(ex) {
  if (ex.type === 'primitive') {
    if (Number.isInteger(ex.value)) {
      if (ex.enumString) return ex.enumString;
      return `${ex.value < 0 ? '-' : ''}0x${Math.abs(ex.value).toString(16).toUpperCase()}`;
    }
    return `${ex.value}`;
  }
  if (ex.type === 'bytes') {
    const shown = Array.from(ex.bytes.slice(0, 8)).join(', ');
    return `[${shown}${ex.bytes.length > 8 ? ', ...' : ''}]`;
  }
  return '<no value>';
}

// reprObject: the summary of an exported object, with the references that resolved nothing.
function repr(ctx, ex, unresolved) {
  const type = ctx.ksyTypes[ex.cls];
  const template = type && type['-webide-representation'];
  if (!template) return '';
  return template.replace(/{(.*?)}/g, (whole, ref) => {
    const [where, fmt] = ref.split(':');
    const format = { sep: ', ' };
    if (fmt) for (const kv of fmt.split(',')) { const [k, v] = kv.split('='); format[k] = v === undefined ? true : v; }
    let cur = ex;
    for (const k of where.split('.')) {
      if (!cur || cur.type !== 'object') cur = null;
      else cur = k === 'this' ? cur : cur.fields[jsName(k, true)];
    }
    if (!cur) {
      unresolved.push(`${ex.cls}:${where}`);
      return '';
    }
    if (cur.type === 'object') return repr(ctx, cur, unresolved);
    if (format.str && cur.type === 'bytes') return `"${Buffer.from(cur.bytes).toString('latin1')}"`;
    if (format.hex && cur.type === 'bytes') return Buffer.from(cur.bytes).toString('hex');
    if (format.dec && cur.type === 'primitive' && Number.isInteger(cur.value)) return `${cur.value}`;
    if (cur.type === 'array') return cur.items.map((it) => repr(ctx, it, unresolved)).join(format.sep);
    return primitiveText(cur);
  });
}

function walk(ctx, ex, nodes) {
  if (ex.type === 'array') {
    ex.items.forEach((it) => walk(ctx, it, nodes));
    return;
  }
  const name = ex.path.length ? ex.path[ex.path.length - 1] : '';
  const unresolved = [];
  let text;
  if (ex.type === 'object') {
    const summary = repr(ctx, ex, unresolved);
    text = `${name} [${ex.cls}]${summary ? `: ${summary}` : ''}`;
  } else {
    text = `${name} = ${primitiveText(ex)}`;
  }
  nodes.push({
    path: ex.path.join('.'),
    class: ex.cls || null,
    text,
    unresolved,
    validation_error: ex.validationError,
    instance_error: ex.instanceError || null,
    incomplete: ex.incomplete,
  });
  if (ex.type === 'object') Object.values(ex.fields).forEach((f) => walk(ctx, f, nodes));
}

async function main() {
  const args = process.argv.slice(2);
  const noLazy = args[0] === '--eager';
  const [mainKsy, ...dataFiles] = noLazy ? args.slice(1) : args;
  if (!mainKsy || dataFiles.length === 0) {
    process.stderr.write('usage: webide_tree.js MAIN.ksy FILE.bin...\n');
    process.exit(2);
  }
  const ctx = await build(mainKsy);
  const Main = require(path.join(ctx.out, `${ctx.top}.js`))[ctx.top];
  const results = dataFiles.map((file) => {
    const data = fs.readFileSync(file);
    const buf = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
    const root = new Main(new KaitaiStream(buf, 0));
    let error = null;
    try {
      root._read();
    } catch (e) {
      error = `${e.name}: ${e.message}`;
    }
    const nodes = [];
    walk(ctx, exportValue(ctx, root, { start: 0, end: data.length }, [], noLazy), nodes);
    return { file, error, imports: ctx.imports, nodes };
  });
  fs.rmSync(ctx.out, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(results) + '\n');
}

main().catch((err) => {
  process.stderr.write(`error: ${(err && err.stack) || err}\n`);
  process.exitCode = 1;
});
