// The new-session form: what to run (a folder as a bundle, on a Telo version or, where the
// runner still takes it, an image; or an app of the runner's catalog), its environment and
// ports, and the terms when the runner has some. It turns the form into the create request
// the runner's capabilities call for, as Studio sends it (docs/telo-versions.md).
import { TERMS_HEADER, json } from "./api.js";
import { entryCandidates, readFolder } from "./bundle.js";

const $ = (id) => document.getElementById(id);

/** A growing list of input rows (env variables, ports) with an Add button and Remove per row. */
function rowList(container, addButton, makeRow) {
  const add = () => {
    const row = document.createElement("div");
    row.className = "row";
    const index = container.childElementCount + 1;
    const remove = document.createElement("button");
    remove.type = "button";
    remove.textContent = "Remove";
    remove.setAttribute("aria-label", `Remove row ${index}`);
    remove.addEventListener("click", () => {
      row.remove();
      addButton.focus();
    });
    row.append(...makeRow(index), remove);
    container.append(row);
    row.querySelector("input")?.focus();
  };
  addButton.addEventListener("click", add);
}

function labelled(element, label) {
  element.setAttribute("aria-label", label);
  return element;
}

function envRow(index) {
  const name = labelled(document.createElement("input"), `Variable ${index} name`);
  name.className = "env-name";
  name.pattern = "[A-Za-z_][A-Za-z0-9_]*";
  name.required = true;
  const value = labelled(document.createElement("input"), `Variable ${index} value`);
  value.className = "env-value";
  return [name, value];
}

function portRow(index) {
  const port = labelled(document.createElement("input"), `Port ${index} number`);
  Object.assign(port, { type: "number", min: "1", max: "65535", required: true, className: "port-number" });
  const protocol = labelled(document.createElement("select"), `Port ${index} protocol`);
  protocol.className = "port-protocol";
  protocol.append(new Option("tcp", "tcp"), new Option("udp", "udp"));
  return [port, protocol];
}

const envOf = () =>
  Object.fromEntries([...$("env-rows").children].map((row) => [row.querySelector(".env-name").value, row.querySelector(".env-value").value]));

const portsOf = () =>
  [...$("port-rows").children].map((row) => ({ port: Number(row.querySelector(".port-number").value), protocol: row.querySelector(".port-protocol").value }));

/** The folder's files, read when it is chosen; the entry picker lists its YAML files. */
function bundleInput() {
  let files = [];
  $("folder").addEventListener("change", async () => {
    const read = await readFolder($("folder").files);
    files = read.files;
    const entries = entryCandidates(files);
    $("entry").replaceChildren(...entries.map((path) => new Option(path, path)));
    const bytes = files.reduce((sum, file) => sum + file.contents.length, 0);
    const notes = [
      ...(read.left > 0 ? [`${read.left} in .git or node_modules left out`] : []),
      ...(files.length > 0 && entries.length === 0 ? ["no YAML file to start"] : []),
    ];
    $("folder-summary").textContent = files.length === 0 ? "Nothing to send in this folder." : [`${files.length} files, ${Math.ceil(bytes / 1024)} KiB`, ...notes].join("; ");
  });
  return () => files;
}

/** What the app runs on: a version, an image (deprecated), or, with neither, the runner's default. */
function runsOn() {
  if ($("use-image").checked) return { config: { image: $("image").value, pullPolicy: $("pull-policy").value } };
  const telo = $("telo").value.trim();
  return telo === "" ? {} : { telo };
}

function selectedSource() {
  return document.querySelector('input[name="source"]:checked').value;
}

function showSource() {
  const app = selectedSource() === "app";
  $("bundle-fields").hidden = app;
  $("bundle-fields").disabled = app;
  $("app-fields").hidden = !app;
  $("app-fields").disabled = !app;
}

/** Wires the form; `onCreated({sessionId, requested})` gets each session it starts. */
export function setUpForm(capabilities, onCreated) {
  const files = bundleInput();
  rowList($("env-rows"), $("add-env"), envRow);
  rowList($("port-rows"), $("add-port"), portRow);
  for (const radio of document.querySelectorAll('input[name="source"]')) radio.addEventListener("change", showSource);
  showSource();
  $("new-session").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("form-error").textContent = "";
    const common = { env: envOf(), inspect: $("inspect").checked, ...(portsOf().length > 0 && { ports: portsOf() }) };
    // The terms box is required when there are terms, so a submitted form has accepted them.
    const headers = capabilities.terms ? { [TERMS_HEADER]: capabilities.terms.version } : {};
    $("start").disabled = true;
    try {
      if (selectedSource() === "app") {
        const created = await json("POST", `/v1/apps/${encodeURIComponent($("app").value)}/sessions`, common, headers);
        onCreated({ sessionId: created.sessionId });
      } else {
        const target = runsOn();
        const body = { bundle: { entryRelativePath: $("entry").value, files: files() }, ...common, ...target };
        const created = await json("POST", "/v1/sessions", body, headers);
        onCreated({ sessionId: created.sessionId, requested: target.telo });
      }
    } catch (error) {
      $("form-error").textContent = error.message;
    } finally {
      $("start").disabled = false;
    }
  });
}
