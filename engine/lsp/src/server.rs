//! The message loop. One thread owns the workspace: it applies edits,
//! answers requests, and re-checks the variants an edit touched once the
//! edits pause (`DEBOUNCE`), so a burst of keystrokes costs one check. A
//! save also plays `check`'s smoke games, on a worker thread: every edit
//! bumps a generation counter, and a worker whose generation is stale
//! stops between two decisions and reports nothing.

use crate::analysis::Severity;
use crate::features::{self, Target};
use crate::natives::NameKind;
use crate::text::LineIndex;
use crate::uri;
use crate::workspace::Workspace;
use crossbeam_channel::{select, unbounded, Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, DidSaveTextDocument, Notification as _,
    PublishDiagnostics,
};
use lsp_types::request::{Completion, GotoDefinition, HoverRequest, References, Rename, Request as _};
use lsp_types::{
    CompletionOptions, CompletionParams, CompletionResponse, Diagnostic, DiagnosticSeverity, GotoDefinitionParams,
    GotoDefinitionResponse, Hover, HoverContents, HoverParams, HoverProviderCapability, InitializeParams,
    MarkupContent, MarkupKind, OneOf, Position, PublishDiagnosticsParams, ReferenceParams, RenameParams,
    ServerCapabilities, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions, TextEdit, Uri, WorkspaceEdit,
};
use rulesmith_core::Variant;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long edits must pause before the variants they touch are checked
/// again: a few keystrokes typed in a burst are checked once.
pub const DEBOUNCE: Duration = Duration::from_millis(30);

/// A smoke game that failed: what happened, and where in a script if the
/// failure is a script's.
#[derive(Clone, Debug)]
pub struct SmokeFailure {
    pub message: String,
    /// File, 1-based line and column.
    pub at: Option<(PathBuf, usize, usize)>,
}

/// Plays `check`'s smoke games on a variant until one fails or the
/// second argument says to stop (a newer edit came). The command's glue
/// gives it, so that the games are `check`'s own.
pub type SmokeCheck = Arc<dyn Fn(Arc<Variant>, &dyn Fn() -> bool) -> Result<(), SmokeFailure> + Send + Sync>;

type ServerError = Box<dyn std::error::Error + Send + Sync>;

/// Serves the protocol on standard input and output until the editor
/// says exit.
pub fn stdio(smoke: Option<SmokeCheck>) -> Result<(), ServerError> {
    let (connection, threads) = Connection::stdio();
    serve(connection, smoke)?;
    threads.join()?;
    Ok(())
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::FULL),
            save: Some(TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec!["\"".into()]),
            ..Default::default()
        }),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Left(true)),
        ..Default::default()
    }
}

/// Serves one editor session over `connection`.
pub fn serve(connection: Connection, smoke: Option<SmokeCheck>) -> Result<(), ServerError> {
    let params = connection.initialize(serde_json::to_value(capabilities())?)?;
    let params: InitializeParams = serde_json::from_value(params)?;
    let mut server = Server::new(connection.sender.clone(), smoke);
    #[allow(deprecated)]
    let mut folders: Vec<PathBuf> = params.root_uri.as_ref().and_then(uri::to_path).into_iter().collect();
    for f in params.workspace_folders.unwrap_or_default() {
        folders.extend(uri::to_path(&f.uri));
    }
    server.discover(&folders);
    loop {
        let timeout = match server.due {
            Some(due) => due.saturating_duration_since(Instant::now()),
            None => Duration::from_secs(3600),
        };
        select! {
            recv(connection.receiver) -> msg => {
                let Ok(msg) = msg else { break };
                match msg {
                    Message::Request(req) => {
                        if connection.handle_shutdown(&req)? {
                            break;
                        }
                        let response = server.request(req);
                        connection.sender.send(Message::Response(response))?;
                    }
                    Message::Notification(n) => server.notification(n),
                    Message::Response(_) => {}
                }
            }
            recv(server.smoke_results) -> result => {
                if let Ok((generation, root, failure)) = result {
                    server.smoke_done(generation, root, failure);
                }
            }
            default(timeout) => {}
        }
        if server.due.is_some_and(|d| d <= Instant::now()) {
            server.check_dirty();
        }
    }
    server.generation.fetch_add(1, Ordering::SeqCst);
    Ok(())
}

type SmokeResult = (u64, usize, Option<SmokeFailure>);

pub struct Server {
    pub ws: Workspace,
    sender: Sender<Message>,
    smoke: Option<SmokeCheck>,
    /// Bumped by every edit: a smoke worker of an older generation stops.
    generation: Arc<AtomicU64>,
    smoke_sender: Sender<SmokeResult>,
    smoke_results: Receiver<SmokeResult>,
    /// Roots edited since their last check, and when to check them.
    dirty: BTreeSet<usize>,
    /// The variant of the file edited last, checked before the others.
    first: Option<usize>,
    due: Option<Instant>,
    /// Each root's problems: from its last check, and from its smoke games.
    problems: HashMap<usize, Vec<(Severity, rulesmith_core::Diagnostic)>>,
    smoke_failures: HashMap<usize, SmokeFailure>,
    /// What was last published, per file.
    published: BTreeMap<PathBuf, Vec<Diagnostic>>,
}

impl Server {
    pub fn new(sender: Sender<Message>, smoke: Option<SmokeCheck>) -> Self {
        let (smoke_sender, smoke_results) = unbounded();
        Server {
            ws: Workspace::default(),
            sender,
            smoke,
            generation: Arc::new(AtomicU64::new(0)),
            smoke_sender,
            smoke_results,
            dirty: BTreeSet::new(),
            first: None,
            due: None,
            problems: HashMap::new(),
            smoke_failures: HashMap::new(),
            published: BTreeMap::new(),
        }
    }

    /// A server with no editor: what it publishes goes to the returned
    /// channel (benchmarks drive it this way, without the protocol's I/O).
    pub fn detached() -> (Server, Receiver<Message>) {
        let (sender, receiver) = unbounded();
        (Server::new(sender, None), receiver)
    }

    /// The editor opened `path` with `text`: its variants are checked now,
    /// unless they were and the text is the one they saw.
    pub fn open(&mut self, path: PathBuf, text: String) {
        let fresh = self.ws.overlay.get(&path) != Some(&text);
        self.ws.set_text(path.clone(), text);
        let roots = self.ws.roots_of(&path);
        let unchecked = roots.iter().any(|r| !self.problems.contains_key(r));
        if fresh || unchecked {
            self.dirty.extend(roots);
            self.first = self.ws.root_for(&path);
            self.check_dirty();
        }
    }

    /// The editor's text of `path` is now `text` (checked after `DEBOUNCE`).
    pub fn change(&mut self, path: PathBuf, text: String) {
        self.ws.set_text(path.clone(), text);
        self.edited(&path);
    }

    /// Finds the variants under `folders` (the editor's workspace) and
    /// checks them all: what each reads is known from then on, so that an
    /// edit of a script outside a variant's folder re-checks the variant.
    pub fn discover(&mut self, folders: &[PathBuf]) {
        for f in folders {
            self.ws.discover(f);
        }
        self.dirty.extend(0..self.ws.roots.len());
        self.check_all_dirty();
    }

    /// Checks one root edited since its last check (the edited file's own
    /// variant first) and publishes; the others are left for the next
    /// turns of the loop, so that messages are answered in between and the
    /// file being typed in is not kept waiting by every variant that
    /// shares it.
    pub fn check_dirty(&mut self) {
        self.due = None;
        let first = self.first.take().filter(|r| self.dirty.contains(r));
        let Some(root) = first.or_else(|| self.dirty.first().copied()) else {
            return;
        };
        self.dirty.remove(&root);
        let analysis = self.ws.analyze(root);
        self.problems.insert(root, analysis.problems);
        self.publish();
        if !self.dirty.is_empty() {
            self.due = Some(Instant::now());
        }
    }

    /// Checks every root edited since its last check.
    pub fn check_all_dirty(&mut self) {
        while !self.dirty.is_empty() {
            self.check_dirty();
        }
    }

    /// Sends every file's diagnostics that changed since last sent.
    fn publish(&mut self) {
        let mut now: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
        let mut texts: HashMap<PathBuf, Option<String>> = HashMap::new();
        let mut add = |ws: &Workspace, file: &Path, line: usize, column: usize, severity: Severity, message: &str| {
            let text = texts.entry(file.to_path_buf()).or_insert_with(|| ws.text(file));
            let range = LineIndex::new(text.as_deref().unwrap_or("")).diagnostic_range(line, column);
            let list = now.entry(file.to_path_buf()).or_default();
            let d = Diagnostic {
                range,
                severity: Some(match severity {
                    Severity::Error => DiagnosticSeverity::ERROR,
                    Severity::Warning => DiagnosticSeverity::WARNING,
                }),
                source: Some("rulesmith".into()),
                message: message.to_string(),
                ..Default::default()
            };
            // A script shared by several variants: each problem once.
            if !list.contains(&d) {
                list.push(d);
            }
        };
        let mut roots: Vec<&usize> = self.problems.keys().collect();
        roots.sort();
        for root in roots {
            for (severity, d) in &self.problems[root] {
                add(&self.ws, &d.file, d.line, d.column, *severity, &d.message);
            }
        }
        for (root, f) in &self.smoke_failures {
            let (file, line, column) = f.at.clone().unwrap_or((self.ws.roots[*root].file.clone(), 0, 0));
            add(&self.ws, &file, line, column, Severity::Error, &f.message);
        }
        let files: BTreeSet<PathBuf> = now.keys().chain(self.published.keys()).cloned().collect();
        for file in files {
            let list = now.remove(&file).unwrap_or_default();
            if self.published.get(&file) == Some(&list) {
                continue;
            }
            let params = PublishDiagnosticsParams::new(uri::from_path(&file), list.clone(), None);
            let _ = self.sender.send(Message::Notification(Notification::new(
                PublishDiagnostics::METHOD.into(),
                params,
            )));
            if list.is_empty() {
                self.published.remove(&file);
            } else {
                self.published.insert(file, list);
            }
        }
    }

    pub fn notification(&mut self, n: Notification) {
        match n.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(p) = n.extract::<lsp_types::DidOpenTextDocumentParams>(DidOpenTextDocument::METHOD) else {
                    return;
                };
                let Some(path) = uri::to_path(&p.text_document.uri) else {
                    return;
                };
                self.open(path, p.text_document.text);
            }
            DidChangeTextDocument::METHOD => {
                let Ok(p) = n.extract::<lsp_types::DidChangeTextDocumentParams>(DidChangeTextDocument::METHOD) else {
                    return;
                };
                let Some(path) = uri::to_path(&p.text_document.uri) else {
                    return;
                };
                // Full synchronisation: the last change holds the whole text.
                let Some(change) = p.content_changes.into_iter().last() else {
                    return;
                };
                self.change(path, change.text);
            }
            DidSaveTextDocument::METHOD => {
                let Ok(p) = n.extract::<lsp_types::DidSaveTextDocumentParams>(DidSaveTextDocument::METHOD) else {
                    return;
                };
                let Some(path) = uri::to_path(&p.text_document.uri) else {
                    return;
                };
                let roots = self.ws.roots_of(&path);
                self.dirty.extend(roots.iter().copied());
                self.check_all_dirty();
                self.start_smoke(roots);
            }
            DidCloseTextDocument::METHOD => {
                let Ok(p) = n.extract::<lsp_types::DidCloseTextDocumentParams>(DidCloseTextDocument::METHOD) else {
                    return;
                };
                let Some(path) = uri::to_path(&p.text_document.uri) else {
                    return;
                };
                self.ws.close(&path);
                self.edited(&path);
            }
            _ => {}
        }
    }

    /// A file changed: its variants are checked when the edits pause, and
    /// their smoke games (running or done) no longer hold.
    pub fn edited(&mut self, path: &Path) {
        self.generation.fetch_add(1, Ordering::SeqCst);
        let roots = self.ws.roots_of(path);
        for r in &roots {
            self.smoke_failures.remove(r);
        }
        self.first = self.ws.root_for(path);
        self.dirty.extend(roots);
        self.due = Some(Instant::now() + DEBOUNCE);
    }

    /// Plays the smoke games of the roots that checked clean, on a worker.
    fn start_smoke(&mut self, roots: Vec<usize>) {
        let Some(smoke) = self.smoke.clone() else { return };
        let generation = self.generation.load(Ordering::SeqCst);
        let jobs: Vec<(usize, Arc<Variant>)> = roots
            .into_iter()
            .filter(|r| {
                !self
                    .problems
                    .get(r)
                    .is_some_and(|p| p.iter().any(|(s, _)| *s == Severity::Error))
            })
            .filter_map(|r| Some((r, self.ws.roots[r].variant.clone()?)))
            .collect();
        let counter = self.generation.clone();
        let results = self.smoke_sender.clone();
        std::thread::spawn(move || {
            let stale = || counter.load(Ordering::SeqCst) != generation;
            for (root, variant) in jobs {
                if stale() {
                    return;
                }
                let failure = smoke(variant, &stale).err();
                let _ = results.send((generation, root, failure));
            }
        });
    }

    fn smoke_done(&mut self, generation: u64, root: usize, failure: Option<SmokeFailure>) {
        if generation != self.generation.load(Ordering::SeqCst) {
            return;
        }
        match failure {
            Some(f) => self.smoke_failures.insert(root, f),
            None => self.smoke_failures.remove(&root),
        };
        self.publish();
    }

    pub fn request(&mut self, req: Request) -> Response {
        let id = req.id.clone();
        let result = match req.method.as_str() {
            HoverRequest::METHOD => self.params(req).map(|p: HoverParams| {
                let at = &p.text_document_position_params;
                serde_json::to_value(self.hover(&at.text_document.uri, at.position)).unwrap_or_default()
            }),
            Completion::METHOD => self.params(req).map(|p: CompletionParams| {
                let at = &p.text_document_position;
                let items = self.at(&at.text_document.uri, at.position, |ws, root, path, offset| {
                    Some(features::completion(ws, root, path, offset))
                });
                serde_json::to_value(items.map(CompletionResponse::Array)).unwrap_or_default()
            }),
            GotoDefinition::METHOD => self.params(req).map(|p: GotoDefinitionParams| {
                let at = &p.text_document_position_params;
                let found = self.at(&at.text_document.uri, at.position, |ws, root, path, offset| {
                    let (target, range) = features::resolve(ws, root, path, offset)?;
                    Some(features::locations(
                        ws,
                        features::definition(ws, root, path, &target, &range),
                    ))
                });
                serde_json::to_value(found.map(GotoDefinitionResponse::Array)).unwrap_or_default()
            }),
            References::METHOD => self.params(req).map(|p: ReferenceParams| {
                let at = &p.text_document_position;
                let found = self.at(&at.text_document.uri, at.position, |ws, root, path, offset| {
                    let (target, _) = features::resolve(ws, root, path, offset)?;
                    Some(features::locations(ws, features::references(ws, root, &target)))
                });
                serde_json::to_value(found).unwrap_or_default()
            }),
            Rename::METHOD => match self.params(req) {
                Ok(p) => self.rename(p),
                Err(e) => Err(e),
            },
            _ => Err((ErrorCode::MethodNotFound, format!("no method {}", req.method))),
        };
        match result {
            Ok(v) => Response::new_ok(id, v),
            Err((code, message)) => Response::new_err(id, code as i32, message),
        }
    }

    fn params<P: serde::de::DeserializeOwned>(&self, req: Request) -> Result<P, (ErrorCode, String)> {
        serde_json::from_value(req.params).map_err(|e| (ErrorCode::InvalidParams, e.to_string()))
    }

    /// Runs a feature at a document position: with the document's root,
    /// path and byte offset.
    fn at<T>(
        &mut self,
        doc: &Uri,
        pos: Position,
        feature: impl FnOnce(&Workspace, usize, &Path, usize) -> Option<T>,
    ) -> Option<T> {
        let path = uri::to_path(doc)?;
        let root = self.ws.root_for(&path)?;
        let text = self.ws.text(&path)?;
        let offset = LineIndex::new(&text).offset(pos);
        feature(&self.ws, root, &path, offset)
    }

    pub fn hover(&mut self, doc: &Uri, pos: Position) -> Option<Hover> {
        let path = uri::to_path(doc)?;
        let text = self.ws.text(&path)?;
        self.at(doc, pos, |ws, root, path, offset| {
            let (target, range) = features::resolve(ws, root, path, offset)?;
            let value = features::hover(ws, root, path, &target, &range)?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value,
                }),
                range: Some(LineIndex::new(&text).range(range)),
            })
        })
    }

    // `WorkspaceEdit` is keyed by `Uri`, whose lazily parsed parts clippy
    // takes for mutable keys; a key is never changed once inserted.
    #[allow(clippy::mutable_key_type)]
    fn rename(&mut self, p: RenameParams) -> Result<serde_json::Value, (ErrorCode, String)> {
        let at = &p.text_document_position;
        let new = p.new_name.clone();
        if !features::is_identifier(&new) {
            return Err((
                ErrorCode::InvalidParams,
                format!("'{new}' is not a name: letters, digits and _, not starting with a digit"),
            ));
        }
        let found = self.at(&at.text_document.uri, at.position, |ws, root, path, offset| {
            let (target, _) = features::resolve(ws, root, path, offset)?;
            match target {
                Target::Function(_) | Target::Super(_) | Target::Declared(NameKind::Action, _) => {
                    Some(features::locations(ws, features::references(ws, root, &target)))
                }
                _ => None,
            }
        });
        let Some(locations) = found else {
            return Err((
                ErrorCode::InvalidParams,
                "only a script function or an action can be renamed here".into(),
            ));
        };
        let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
        for l in locations {
            changes
                .entry(l.uri)
                .or_default()
                .push(TextEdit::new(l.range, new.clone()));
        }
        Ok(serde_json::to_value(WorkspaceEdit::new(changes)).unwrap_or_default())
    }
}
