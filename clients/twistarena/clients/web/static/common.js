// Small helpers shared by the pages.
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  Object.entries(attrs).forEach(([k, v]) => node.setAttribute(k, v));
  children.flat().forEach((c) => node.append(c instanceof Node ? c : document.createTextNode(String(c))));
  return node;
}

export async function getJSON(url) {
  const response = await fetch(url, { headers: { Accept: 'application/json' } });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || `${response.status} ${url}`);
  return body;
}

export function link(href, text) { return el('a', { href }, text); }

export function badge(status) { return el('span', { class: `badge ${status}` }, status); }

export function main() { return document.getElementById('main'); }

export function showError(error) {
  main().replaceChildren(el('p', { class: 'badge error' }, String(error.message || error)));
}

export function elapsed(seconds) {
  const s = Math.max(0, Math.floor(seconds));
  const m = Math.floor(s / 60);
  return m ? `${m}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

// Re-run `fn` every `ms` while `keepGoing()` says so; errors are shown, not thrown.
export function every(ms, fn, keepGoing = () => true) {
  const tick = async () => {
    try {
      await fn();
    } catch (error) {
      showError(error);
      return;
    }
    if (keepGoing()) setTimeout(tick, ms);
  };
  tick();
}

// "3m ago" for an ISO time, the ISO time itself in the tooltip.
export function ago(iso, now = Date.now()) {
  if (!iso) return el('span', { class: 'muted' }, '—');
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  const text = s < 60 ? `${s}s ago` : s < 3600 ? `${Math.floor(s / 60)}m ago`
    : s < 86400 ? `${Math.floor(s / 3600)}h ago` : `${Math.floor(s / 86400)}d ago`;
  return el('time', { datetime: iso, title: iso }, text);
}

// An agent's own rating as every page names it: "μ−3σ 12.3 (twisted-2 v1)".
export function ratingOf(a) {
  return a.rating_arena_id ? `${a.rating_arena_id}${a.rating_version ? ` v${a.rating_version}` : ''}` : 'not rated yet';
}
