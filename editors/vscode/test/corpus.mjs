// The TextMate grammar against the language server, on a sample of the corpus: every token
// `ggp lsp` classifies (comments, variables, numbers, keywords, GDL relations, relations and
// functions, constants) must get the matching scope from the grammar, which highlights files
// when no server runs. The grammar sees one line at a time and no context, so it cannot tell a
// relation from a function, nor a zero-argument relation from a constant: the accepted scopes
// say which ones it may give. Each sampled game is also converted to infix (`ggp convert`)
// and compared in that notation against the infix grammar.
//
// Usage: node test/corpus.mjs [GGP_BINARY] (default: ../../target/debug/ggp; the corpus is
// ../../../shared/corpus or $GGP_SHARED/corpus). Skips, saying so, without the corpus.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const require = createRequire(import.meta.url);
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../..');
const ggp = process.argv[2] || join(root, 'target/debug/ggp');
const shared = process.env.GGP_SHARED || resolve(root, '../shared');
const corpus = join(shared, 'corpus');
if (!existsSync(corpus)) {
  console.log(`SKIP grammar corpus test: ${corpus} is absent`);
  process.exit(0);
}

// What the grammar may say for each class of the server's legend.
const accepted = {
  keyword: ['keyword.control'],
  // A relation or function is named after `(`; a zero-argument relation is written bare.
  relation: ['entity.name.function', 'support.function.builtin', 'keyword.control.logical', 'constant.other'],
  'relation (GDL)': ['support.function.builtin'],
  function: ['entity.name.function', 'support.function.builtin', 'keyword.control.logical'],
  constant: ['constant.other', 'support.function.builtin'],
  variable: ['variable.other'],
  number: ['constant.numeric'],
  comment: ['comment.line'],
};
// In infix, `~p(X)` is `(not (p ?x))` and `(p(X) | q(X))` is `(or …)`: the keyword's place is
// the operator, or the parenthesis that opens the disjunction.
const acceptedInfix = {
  ...accepted,
  keyword: ['keyword.control', 'keyword.operator', 'punctuation.section.parens.begin'],
  constant: ['constant.other', 'support.function.builtin', 'constant.numeric'],
  comment: ['comment.line.percentage'],
};
const classes = ['keyword', 'relation', 'function', 'constant', 'variable', 'number', 'comment'];

function kifFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...kifFiles(path));
    else if (name.endsWith('.kif')) out.push(path);
  }
  return out;
}

// A minimal language client over the server's standard input and output.
class Client {
  constructor() {
    this.child = spawn(ggp, ['lsp'], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.buffer = Buffer.alloc(0);
    this.waiting = new Map();
    this.nextId = 0;
    this.child.stdout.on('data', (chunk) => this.read(chunk));
  }
  read(chunk) {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())[1]);
      if (this.buffer.length < end + 4 + length) return;
      const message = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8'));
      this.buffer = this.buffer.subarray(end + 4 + length);
      if (message.id !== undefined && !message.method && this.waiting.has(message.id)) {
        this.waiting.get(message.id)(message);
        this.waiting.delete(message.id);
      }
    }
  }
  send(message) {
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }
  request(method, params) {
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in 120 s`)), 120000);
      this.waiting.set(id, (m) => { clearTimeout(timer); resolve(m); });
      this.send({ id, method, params });
    });
  }
  notify(method, params) {
    this.send({ method, params });
  }
}

async function main() {
  const wasm = readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      const file = scope === 'source.gdl' ? 'gdl.tmLanguage.json' : 'gdl-infix.tmLanguage.json';
      const path = join(here, '../syntaxes', file);
      return vsctm.parseRawGrammar(readFileSync(path, 'utf8'), path);
    },
  });
  const grammar = await registry.loadGrammar('source.gdl');
  const infixGrammar = await registry.loadGrammar('source.gdl-infix');

  const all = [...kifFiles(join(corpus, 'games')), ...kifFiles(join(corpus, 'gdl2'))];
  // Every 15th game, and the largest.
  const sample = all.filter((_, k) => k % 15 === 0);
  const largest = join(corpus, 'games/ric2b-ggp-base/arithmetic-stupid.kif');
  if (existsSync(largest) && !sample.includes(largest)) sample.push(largest);

  const client = new Client();
  const init = await client.request('initialize', { processId: null, capabilities: {} });
  client.notify('initialized', {});
  const legend = init.result.capabilities.semanticTokensProvider.legend;
  if (legend.tokenTypes.length !== classes.length) throw new Error('the legend changed: update this test');

  let checked = 0;
  let failed = 0;
  // Compares the grammar's scopes with the server's tokens for one text.
  async function compare(path, text, languageId, grammar, accepted) {
    const uri = pathToFileURL(path).href;
    client.notify('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
    const response = await client.request('textDocument/semanticTokens/full', { textDocument: { uri } });
    client.notify('textDocument/didClose', { textDocument: { uri } });
    // The grammar's scopes for every line, as VS Code computes them (UTF-16 columns).
    const lines = text.split(/\r\n|\r|\n/);
    let state = vsctm.INITIAL;
    const scopes = lines.map((line) => {
      const result = grammar.tokenizeLine(line, state);
      state = result.ruleStack;
      return result.tokens;
    });
    const data = response.result.data;
    let line = 0;
    let start = 0;
    for (let k = 0; k < data.length; k += 5) {
      if (data[k] > 0) { line += data[k]; start = data[k + 1]; } else { start += data[k + 1]; }
      let cls = classes[data[k + 3]];
      if (cls === 'relation' && (data[k + 4] & 2)) cls = 'relation (GDL)';
      const token = scopes[line].find((t) => t.startIndex <= start && start < t.endIndex);
      const got = token ? token.scopes.join(' ') : '(none)';
      checked += 1;
      if (!accepted[cls].some((scope) => got.includes(scope))) {
        failed += 1;
        if (failed <= 20) {
          const word = lines[line].slice(start, start + data[k + 2]);
          console.log(`${path}:${line + 1}:${start + 1}: \`${word}\` is a ${cls} for the server, but the grammar says ${got}`);
        }
      }
    }
  }
  let converted = 0;
  for (const path of sample) {
    const text = readFileSync(path, 'utf8');
    await compare(path, text, 'gdl', grammar, accepted);
    // The same game in infix, against the infix grammar.
    const infix = spawnSync(ggp, ['convert', '--to', 'infix', path], { encoding: 'utf8', maxBuffer: 1 << 26 });
    if (infix.status === 0) {
      converted += 1;
      await compare(path.replace(/\.kif$/, '.infix'), infix.stdout, 'gdl-infix', infixGrammar, acceptedInfix);
    }
  }
  client.child.stdin.end();
  console.log(`grammars against the server on ${sample.length} corpus files (${converted} also in infix): ${checked} tokens`);
  console.log(`${checked - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
