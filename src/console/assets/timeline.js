// A session's start as a waterfall, from the session document's optional `timeline`
// (`[{stage, at, detail?}]`, `at` in ISO 8601). Each stage is a bar from the previous stage's
// time to its own, so the bar's length is how long that stage took; the first stage is the
// origin. No timeline, or an empty one, renders nothing: older runners do not send it.

/** Milliseconds as a person reads them: 340 ms, 1.2 s, 2 min 3 s. */
export function formatDuration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/**
 * The bars: each stage's offset and width as percentages of the whole start, in time order.
 * Entries whose time does not parse are dropped rather than drawn at a wrong place.
 */
export function waterfall(timeline) {
  const stages = (timeline ?? [])
    .map((entry) => ({ ...entry, time: Date.parse(entry.at) }))
    .filter((entry) => Number.isFinite(entry.time))
    .sort((a, b) => a.time - b.time);
  if (stages.length === 0) return { totalMs: 0, bars: [] };
  const origin = stages[0].time;
  const totalMs = stages.at(-1).time - origin;
  const share = (ms) => (totalMs === 0 ? 0 : (ms / totalMs) * 100);
  const bars = stages.map((entry, index) => {
    const from = index === 0 ? entry.time : stages[index - 1].time;
    const durationMs = entry.time - from;
    return {
      stage: entry.stage,
      at: entry.at,
      detail: entry.detail,
      durationMs,
      offset: share(from - origin),
      width: share(durationMs),
    };
  });
  return { totalMs, bars };
}

/** Draws the waterfall into `section` (its heading and list), or hides it when there is none. */
export function renderTimeline(section, timeline) {
  const { totalMs, bars } = waterfall(timeline);
  section.hidden = bars.length === 0;
  const list = section.querySelector("ol");
  const total = section.querySelector(".timeline-total");
  if (bars.length === 0) {
    list.replaceChildren();
    return;
  }
  total.textContent = `(${formatDuration(totalMs)})`;
  list.replaceChildren(
    ...bars.map((bar, index) => {
      const item = document.createElement("li");
      item.dataset.stage = bar.stage;
      if (bar.stage === "failed") item.classList.add("failed");
      const label = document.createElement("span");
      label.className = "stage";
      label.textContent = bar.stage;
      const track = document.createElement("span");
      track.className = "track";
      // The bar is the picture of the text beside it; screen readers read the text.
      track.setAttribute("aria-hidden", "true");
      const fill = document.createElement("span");
      fill.className = "fill";
      fill.style.marginLeft = `${bar.offset}%`;
      fill.style.width = `${bar.width}%`;
      track.append(fill);
      const duration = document.createElement("span");
      duration.className = "duration";
      duration.textContent = index === 0 ? new Date(bar.at).toLocaleTimeString() : `+${formatDuration(bar.durationMs)}`;
      item.append(label, track, duration);
      if (bar.detail) {
        const detail = document.createElement("span");
        detail.className = "detail";
        detail.textContent = bar.detail;
        item.append(detail);
      }
      return item;
    }),
  );
}
