// Starts `rulesmith lsp` for .rhai and .toml files and stops it with the
// editor. Plain JavaScript: no build step before packaging.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("rulesmith").get("path") || "rulesmith";
  const server = { command, args: ["lsp"] };
  client = new LanguageClient(
    "rulesmith",
    "Rulesmith",
    { run: server, debug: server },
    {
      documentSelector: [
        { scheme: "file", language: "rhai" },
        { scheme: "file", language: "toml" },
      ],
    }
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("rulesmith.path")) {
        vscode.window.showInformationMessage("Rulesmith: reload the window to use the new rulesmith.path.");
      }
    })
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
