// Ragline web console. Every request goes to the same HTTP API with the API key in the
// X-API-Key header (kept in sessionStorage for this tab only, never put in a URL), and
// every write carries the CSRF token of the key's principal. All text from the server is
// inserted with textContent / DOM nodes, never as HTML.

const KEY_SLOT = "ragline.key";
const state = { key: sessionStorage.getItem(KEY_SLOT) || "", csrf: "", user: "" };

const $ = (sel) => document.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function status(message, isError = false) {
  const s = $("#status");
  s.textContent = message;
  s.classList.toggle("error", isError);
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(path, { method = "GET", json, form, raw } = {}) {
  if (!state.key) throw new ApiError(401, "enter an API key first");
  const headers = { "X-API-Key": state.key };
  if (method !== "GET") headers["X-CSRF-Token"] = state.csrf;
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = form;
  }
  const response = await fetch(path, { method, headers, body, credentials: "omit", cache: "no-store" });
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const data = await response.json();
      if (data && data.error && data.error.message) message = data.error.message;
    } catch (_) { /* not JSON */ }
    throw new ApiError(response.status, message);
  }
  if (raw) return response;
  return response.json();
}

const enc = encodeURIComponent;

// -- key -------------------------------------------------------------------------------
async function useKey(key) {
  state.key = key;
  try {
    const who = await api("/v1/web/csrf");
    state.csrf = who.token;
    state.user = who.user;
    sessionStorage.setItem(KEY_SLOT, key);
    $("#whoami").textContent = `signed in as ${who.user}${who.can_write ? " (can upload)" : ""}`;
    status("");
    probeGaps();
    refreshAlerts();
  } catch (err) {
    state.key = "";
    sessionStorage.removeItem(KEY_SLOT);
    $("#whoami").textContent = "";
    status(`key refused: ${err.message}`, true);
  }
}

$("#key-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const input = $("#api-key");
  const key = input.value.trim();
  input.value = "";
  if (key) useKey(key);
});
$("#key-forget").addEventListener("click", () => {
  sessionStorage.removeItem(KEY_SLOT);
  Object.assign(state, { key: "", csrf: "", user: "" });
  $("#whoami").textContent = "";
  status("key forgotten");
});

// -- tabs ------------------------------------------------------------------------------
function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.tab === name);
  }
  for (const s of document.querySelectorAll("section.tab")) s.hidden = s.id !== `tab-${name}`;
  if (name === "documents") refreshDocuments();
  if (name === "alerts") refreshAlerts();
  if (name === "gaps") refreshGaps();
}
for (const b of document.querySelectorAll("#tabs button")) {
  b.addEventListener("click", () => showTab(b.dataset.tab));
}

// -- search and ask --------------------------------------------------------------------
function hitItem(h) {
  return el(
    "li",
    {},
    el("button", { type: "button", class: "cite", onclick: () => openPassage(h.content_id, h) }, h.label),
    " ",
    el("strong", {}, h.title || h.source),
    el("div", { class: "meta" },
      `p. ${h.page_start}${h.page_end !== h.page_start ? "-" + h.page_end : ""}, lines ${h.line_start}-${h.line_end}`,
      h.section_path && h.section_path.length ? ` · ${h.section_path.join(" > ")}` : ""),
    el("div", {}, h.text.length > 400 ? h.text.slice(0, 400) + "…" : h.text),
  );
}

function renderAnswer(a) {
  const box = $("#answer");
  box.replaceChildren();
  // The answer's text with each citation label turned into a button; labels are read
  // from the answer's own citations, whatever their format.
  const labels = [...new Set(a.citations.map((c) => c.label))].sort((x, y) => y.length - x.length);
  const byLabel = new Map();
  for (const c of a.citations) if (!byLabel.has(c.label)) byLabel.set(c.label, c);
  let rest = a.answer;
  const parts = [];
  while (rest.length) {
    let best = -1;
    let found = "";
    for (const l of labels) {
      const i = rest.indexOf(l);
      if (i >= 0 && (best < 0 || i < best)) { best = i; found = l; }
    }
    if (best < 0) { parts.push(rest); break; }
    parts.push(rest.slice(0, best));
    const c = byLabel.get(found);
    parts.push(el("button", { type: "button", class: "cite", dataset: { contentId: c.content_id },
      onclick: () => openPassage(c.content_id, c) }, found));
    rest = rest.slice(best + found.length);
  }
  box.append(el("div", { id: "answer-text" }, parts));
  box.append(el("div", { class: "meta" },
    `${a.covered ? "covered" : "not covered"} · ${a.mode} · route ${a.route.rule} · trace ${a.trace_id}`));
  if (a.warnings && a.warnings.length) {
    box.append(el("ul", { class: "warnings" }, a.warnings.map((w) => el("li", {}, w))));
  }
}

async function runQuery(ask) {
  const question = $("#question").value.trim();
  if (!question) return;
  status(ask ? "asking…" : "searching…");
  $("#answer").replaceChildren();
  $("#hits").replaceChildren();
  try {
    const data = await api(ask ? "/v1/ask" : "/v1/search", { method: "POST", json: { question } });
    if (ask) renderAnswer(data); else $("#answer").replaceChildren();
    $("#hits").replaceChildren(...data.hits.map(hitItem));
    status(`${data.hits.length} passages`);
  } catch (err) {
    status(err.message, true);
  }
}
$("#ask-form").addEventListener("submit", (e) => { e.preventDefault(); runQuery(true); });
$("#btn-search").addEventListener("click", () => runQuery(false));

// -- upload and jobs -------------------------------------------------------------------
function jobRow(name) {
  const cells = { doc: el("td"), job: el("td"), state: el("td", {}, "uploading"), reason: el("td") };
  const row = el("tr", {}, el("td", {}, name), cells.doc, cells.job, cells.state, cells.reason);
  $("#jobs tbody").prepend(row);
  return cells;
}

async function watchJob(jobId, cells) {
  for (;;) {
    const job = await api(`/v1/jobs/${enc(jobId)}`);
    cells.state.textContent = job.state;
    cells.state.className = `state-${job.state}`;
    cells.reason.textContent = job.reason || "";
    if (job.done) return job;
    await new Promise((r) => setTimeout(r, 400));
  }
}

async function uploadFiles(files) {
  const tags = $("#acl-tags").value;
  const title = $("#upload-title").value;
  for (const file of files) {
    const cells = jobRow(file.name);
    const form = new FormData();
    form.append("file", file, file.name);
    if (tags.trim()) form.append("acl_tags", tags);
    if (title.trim()) form.append("title", title);
    try {
      const up = await api("/v1/documents", { method: "POST", form });
      cells.doc.textContent = up.doc_id;
      cells.job.textContent = up.job_id;
      cells.state.textContent = up.state;
      watchJob(up.job_id, cells).catch((err) => { cells.reason.textContent = err.message; });
    } catch (err) {
      cells.state.textContent = "refused";
      cells.state.className = "state-failed";
      cells.reason.textContent = err.message;
    }
  }
}

const drop = $("#drop-zone");
drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  uploadFiles([...e.dataTransfer.files]);
});
$("#file-input").addEventListener("change", (e) => {
  uploadFiles([...e.target.files]);
  e.target.value = "";
});

// -- documents, versions and lineage ---------------------------------------------------
async function refreshDocuments() {
  try {
    const data = await api("/v1/catalog");
    $("#docs tbody").replaceChildren(...data.documents.map((d) => el("tr", {},
      el("td", {}, d.title), el("td", {}, d.source), el("td", {}, d.doc_type),
      el("td", {}, d.acl_tags.join(", ") || "public"), el("td", {}, String(d.versions)),
      el("td", {}, el("button", { type: "button", onclick: () => showLineage(d.doc_id) }, "versions")),
    )));
  } catch (err) {
    status(err.message, true);
  }
}
$("#docs-refresh").addEventListener("click", refreshDocuments);

function lineageList(lineage) {
  const emb = lineage.embedder || {};
  const rows = [
    ["parser", lineage.parser], ["ragline", lineage.ragline],
    ["embedder", emb.model ? `${emb.model} (${emb.kind}, ${emb.package_version || "?"})` : ""],
    ["chunker", lineage.chunker ? JSON.stringify(lineage.chunker) : ""],
    ["PII masked", lineage.pii ? JSON.stringify(lineage.pii) : ""],
    ["parser warnings", (lineage.warnings || []).join("; ")],
  ];
  return el("dl", { class: "lineage" },
    rows.filter(([, v]) => v).map(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
}

async function showLineage(docId) {
  try {
    const data = await api(`/v1/documents/${enc(docId)}/lineage`);
    $("#lineage").replaceChildren(
      el("h2", {}, data.title),
      el("p", { class: "meta" }, data.source),
      ...data.versions.map((v) => el("div", { class: "passage" },
        el("strong", {}, `${v.version.slice(0, 12)} · ${v.status}`),
        el("div", { class: "meta" },
          `${v.chunks} chunks, ${v.pages} pages · staged ${v.staged_at || "?"} · searchable ${v.searchable_at || "not yet"}`
          + (v.uploaded_by ? ` · uploaded by ${v.uploaded_by}` : "")),
        lineageList(v.lineage || {}),
        el("button", { type: "button", onclick: () => openDocument(docId, v.version, null) }, "view"),
      )),
    );
  } catch (err) {
    status(err.message, true);
  }
}

// -- viewer: a document page with the cited passage highlighted -------------------------
const norm = (s) => s.toLowerCase().replace(/\s+/g, "");

async function openPassage(contentId, cited) {
  try {
    const where = await api(`/v1/passages/${enc(contentId)}`);
    // The citation's own span (it may be narrower than its passage), else the passage's.
    const span = {
      content_id: contentId,
      page: (cited && cited.page_start) || where.page_start,
      line_start: (cited && cited.line_start) || where.line_start,
      line_end: (cited && cited.line_end) || where.line_end,
    };
    await openDocument(where.doc_id, where.version, span);
  } catch (err) {
    status(err.message, true);
  }
}

function passageNode(p, span) {
  const cited = span && p.content_id === span.content_id;
  const node = el("div", { class: `passage${cited ? " cited" : ""}`, dataset: { contentId: p.content_id } });
  node.append(el("div", { class: "meta" },
    `${p.label} · lines ${p.line_start}-${p.line_end}${p.section_path.length ? " · " + p.section_path.join(" > ") : ""}`));
  if (p.kind === "table" && p.rows.length) {
    const head = el("tr", {}, p.header.map((h) => el("th", {}, h)));
    const body = p.rows.map((r) => el("tr", {}, r.map((cell) => el("td", {}, cell))));
    const table = el("table", {}, el("thead", {}, head), el("tbody", {}, body));
    node.append(cited ? el("mark", { class: "hl" }, table) : table);
    return node;
  }
  const lines = p.text.split("\n");
  const pre = el("pre");
  // Lines of the passage map onto its source span when it has one text line per source
  // line; then only the cited lines are marked, else the whole cited passage is.
  const oneToOne = lines.length === p.line_end - p.line_start + 1;
  lines.forEach((line, i) => {
    const n = p.line_start + i;
    const inSpan = cited && (!oneToOne || (n >= span.line_start && n <= span.line_end));
    pre.append(inSpan ? el("mark", { class: "hl" }, line) : line);
    if (i < lines.length - 1) pre.append("\n");
  });
  node.append(pre);
  return node;
}

async function renderPdfPage(docId, version, pageNo, passageText) {
  const wrap = $("#pdf-wrap");
  const overlay = $("#pdf-highlights");
  overlay.replaceChildren();
  const pdfjs = await import("/static/vendor/pdfjs/pdf.min.mjs");
  pdfjs.GlobalWorkerOptions.workerSrc = "/static/vendor/pdfjs/pdf.worker.min.mjs";
  const bytes = await (await api(`/v1/documents/${enc(docId)}/file?version=${enc(version)}`, { raw: true })).arrayBuffer();
  const pdf = await pdfjs.getDocument({ data: bytes, isEvalSupported: false }).promise;
  const page = await pdf.getPage(Math.min(Math.max(pageNo, 1), pdf.numPages));
  const viewport = page.getViewport({ scale: 1.4 });
  const canvas = $("#pdf-canvas");
  canvas.width = viewport.width;
  canvas.height = viewport.height;
  overlay.style.width = `${viewport.width}px`;
  overlay.style.height = `${viewport.height}px`;
  wrap.hidden = false;
  await page.render({ canvasContext: canvas.getContext("2d"), viewport }).promise;
  // Highlight the text runs of this page that belong to the cited passage.
  const target = norm(passageText);
  const content = await page.getTextContent();
  let marked = 0;
  for (const item of content.items) {
    const s = norm(item.str || "");
    if (s.length < 3 || !target.includes(s)) continue;
    const tx = pdfjs.Util.transform(viewport.transform, item.transform);
    const height = Math.hypot(tx[2], tx[3]);
    const box = el("div", { class: "pdf-hl" });
    Object.assign(box.style, {
      left: `${tx[4]}px`, top: `${tx[5] - height}px`,
      width: `${item.width * viewport.scale}px`, height: `${height}px`,
    });
    overlay.append(box);
    marked += 1;
  }
  return marked;
}

async function openDocument(docId, version, span) {
  showTab("viewer");
  const view = await api(`/v1/documents/${enc(docId)}/view?version=${enc(version)}`);
  const pageNo = span ? span.page : (view.pages[0] ? view.pages[0].page : 1);
  const page = view.pages.find((p) => p.page === pageNo) || view.pages[0] || { page: pageNo, passages: [] };
  $("#viewer-head").replaceChildren(
    el("h2", {}, view.title),
    el("p", { class: "meta", id: "viewer-where" },
      `${view.source} · version ${view.version.slice(0, 12)} · page ${page.page}`
      + (span ? ` · cited lines ${span.line_start}-${span.line_end}` : "")),
  );
  $("#passages").replaceChildren(...page.passages.map((p) => passageNode(p, span)));
  $("#pdf-wrap").hidden = true;
  if (view.doc_type === "pdf" && view.has_file) {
    const cited = page.passages.find((p) => span && p.content_id === span.content_id);
    const marked = await renderPdfPage(docId, view.version, page.page, cited ? cited.text : "");
    $("#pdf-wrap").dataset.highlights = String(marked);
    $("#pdf-wrap").scrollIntoView({ block: "start" });
  } else {
    const hit = $("#passages .passage.cited");
    if (hit) hit.scrollIntoView({ block: "center" });
  }
  status(span ? `page ${page.page}, lines ${span.line_start}-${span.line_end}` : `page ${page.page}`);
}

// -- knowledge gaps (only where the server has them) ------------------------------------
async function probeGaps() {
  try {
    await api("/v1/gaps");
    $("#tab-gaps-button").hidden = false;
  } catch (_) {
    $("#tab-gaps-button").hidden = true;
  }
}

function renderValue(v) {
  if (Array.isArray(v)) return el("ul", {}, v.map((x) => el("li", {}, renderValue(x))));
  if (v && typeof v === "object") {
    return el("dl", { class: "lineage" },
      Object.entries(v).map(([k, x]) => [el("dt", {}, k), el("dd", {}, renderValue(x))]));
  }
  return String(v);
}

async function refreshGaps() {
  try {
    $("#gaps").replaceChildren(renderValue(await api("/v1/gaps")));
  } catch (err) {
    status(err.message, true);
  }
}
$("#gaps-refresh").addEventListener("click", refreshGaps);

// -- alerts and actions -------------------------------------------------------------------
async function refreshAlerts() {
  try {
    const data = await api("/v1/alerts");
    $("#switches").replaceChildren(...data.switches.map((s) => el("li", {},
      `${s.name}: ${s.on ? "ON since " + s.since + " (" + s.reason + ")" : "off"}`)));
    const actions = new Map(data.actions.map((a) => [a.alert, a]));
    $("#firing tbody").replaceChildren(...data.firing.map((a) => el("tr", {},
      el("td", {}, a.name), el("td", {}, a.severity), el("td", {}, a.value === null ? "n/a" : String(a.value)),
      el("td", {}, String(a.threshold)), el("td", {}, a.message),
      el("td", {}, actions.has(a.name) ? actions.get(a.name).detail : a.action || ""))));
    $("#alert-events tbody").replaceChildren(...data.events.map((e) => el("tr", {},
      el("td", {}, e.at), el("td", {}, e.alert), el("td", {}, e.event), el("td", {}, e.message))));
  } catch (err) {
    if (state.key) status(err.message, true);
  }
}
$("#alerts-refresh").addEventListener("click", refreshAlerts);

if (state.key) useKey(state.key);
