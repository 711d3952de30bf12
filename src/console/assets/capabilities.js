// Fits the form to what the runner offers (GET /v1/capabilities): Telo versions when
// `features.teloVersions`, the image only where the config schema still has it (an advanced,
// deprecated choice beside versions, the only one without them), the catalog's apps, the terms.

const $ = (id) => document.getElementById(id);

function offerImage(schema, teloVersions) {
  const image = schema?.properties?.image;
  if (!image) {
    $("image-choice").hidden = true;
    return;
  }
  $("image").value = image.default ?? "";
  $("image").readOnly = image.readOnly === true;
  $("image-options").replaceChildren(...(image.enum ?? []).map((value) => new Option(value, value)));
  $("pull-policy").value = schema.properties.pullPolicy?.default ?? "missing";
  if (!teloVersions) {
    // Without versions the image is how a session names what it runs: not advanced, not optional.
    $("telo-field").hidden = true;
    $("use-image").checked = true;
    $("use-image-field").hidden = true;
    $("image-choice").open = true;
    $("image-choice-summary").textContent = "Image";
  }
}

function offerApps(apps) {
  if (apps.length === 0) return;
  $("source-app-field").hidden = false;
  $("app").replaceChildren(...apps.map((app) => new Option(app.title ? `${app.title} (${app.name})` : app.name, app.name)));
  const describe = () => {
    $("app-description").textContent = apps.find((app) => app.name === $("app").value)?.description ?? "";
  };
  $("app").addEventListener("change", describe);
  describe();
}

function offerTerms(terms) {
  if (!terms) return;
  $("terms").hidden = false;
  $("terms-title").textContent = terms.title;
  $("terms-body").textContent = terms.body;
  $("accept-terms").required = true;
}

export function offer(capabilities) {
  $("runner").textContent = capabilities.displayName ?? "";
  const teloVersions = capabilities.features?.teloVersions === true;
  offerImage(capabilities.config?.schema, teloVersions);
  offerApps(capabilities.apps ?? []);
  offerTerms(capabilities.terms);
}
