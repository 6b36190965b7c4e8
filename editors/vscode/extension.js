// The VS Code client: starts `ggp lsp` for GDL files (prefix and infix) and hands it the
// settings. Everything else (diagnostics, formatting, navigation, semantic highlighting) is
// the server's.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration('ggp');
  const command = config.get('path') || 'ggp';
  const serverOptions = { command, args: ['lsp'] };
  const options = { debounceMs: config.get('debounceMs') || 0 };
  const docs = config.get('codeDocsUrl');
  if (docs) {
    options.codeDocsUrl = docs;
  }
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'gdl' },
      { scheme: 'file', language: 'gdl-infix' },
      { scheme: 'untitled', language: 'gdl' },
      { scheme: 'untitled', language: 'gdl-infix' },
    ],
    initializationOptions: options,
  };
  client = new LanguageClient('ggp', 'GDL (ggp lsp)', serverOptions, clientOptions);
  client.start();
  context.subscriptions.push({ dispose: () => client && client.stop() });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
