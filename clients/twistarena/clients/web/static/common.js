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
