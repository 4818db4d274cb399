// /console: the author's console. Signed out: sign in with the agent's api
// token, or register (where the server allows it; the token is shown once).
// Signed in: failed matches first (each linking to its replay at the failing
// step), upload a version (archive or folder, with a progress bar), the
// versions (activate, delete), the arenas (enroll, withdraw, ratings) and practice.
// Everything shown is put in text nodes (el), never parsed as HTML.
import { el, link, main } from './common.js';

let me = null;

async function post(url, fields) {
  const body = new FormData();
  Object.entries(fields).forEach(([k, v]) => body.append(k, v));
  if (me) body.append('csrf', me.csrf);
  const response = await fetch(url, { method: 'POST', body, headers: me ? { 'X-CSRF-Token': me.csrf } : {} });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || `${response.status}`);
  return answer;
}

function when(ms) { return new Date(ms).toISOString().slice(0, 19).replace('T', ' '); }

function message(id) { return el('p', { id, class: 'muted', role: 'status' }); }

function say(node, text, bad = false) { node.textContent = text; node.className = bad ? 'badge error' : 'muted'; }

function signedOut(note = '') {
  const tokenForm = el('form', { id: 'signin-form', class: 'panel' },
    el('h2', {}, 'Sign in'),
    el('label', {}, 'api token ', el('input', { name: 'token', type: 'password', autocomplete: 'off', required: '', size: '50' })),
    ' ', el('button', { type: 'submit' }, 'Sign in'));
  const regForm = el('form', { id: 'register-form', class: 'panel' },
    el('h2', {}, 'Register a new agent'),
    el('label', {}, 'name ', el('input', { name: 'name', required: '', maxlength: '100' })),
    ' ', el('button', { type: 'submit' }, 'Register'));
  const status = message('signin-status');
  tokenForm.onsubmit = async (e) => {
    e.preventDefault();
    try {
      await post('/console/api/signin', { token: tokenForm.token.value });
      await load();
    } catch (error) { say(status, error.message, true); }
  };
  regForm.onsubmit = async (e) => {
    e.preventDefault();
    try {
      const made = await post('/console/api/register', { name: regForm.name.value });
      await load(made.api_token);
    } catch (error) { say(status, error.message, true); }
  };
  main().replaceChildren(el('h1', {}, 'My agent'), note ? el('p', { class: 'muted' }, note) : '',
    tokenForm, regForm, status);
  document.body.dataset.signedIn = 'no';
}

function failuresTable(failures) {
  const table = el('table', { class: 'grid', id: 'failures' },
    el('tr', {}, ...['when', 'version', 'match', 'step', 'reason'].map((h) => el('th', {}, h))));
  failures.forEach((f) => table.append(el('tr', { 'data-match': f.match_id },
    el('td', {}, when(f.at_ms)), el('td', {}, `v${f.number}`),
    el('td', {}, link(`/matches/${encodeURIComponent(f.match_id)}?step=${f.step}`, f.match_id)),
    el('td', { class: 'num' }, String(f.step)), el('td', {}, f.reason))));
  if (!failures.length) table.append(el('tr', {}, el('td', { colspan: '5', class: 'muted' }, 'no failed match')));
  return table;
}

function versionsTable(versions) {
  const table = el('table', { class: 'grid', id: 'versions' },
    el('tr', {}, ...['version', 'id', 'stored', 'entry', 'matches', 'crashes', 'timeouts', 'illegal', 'cpu ms (mean/max)', ''].map((h) => el('th', {}, h))));
  versions.forEach((v) => {
    const action = v.active ? el('span', { class: 'badge running' }, 'active')
      : el('button', { class: 'activate', 'data-version': v.version_id }, 'Activate');
    if (!v.active) {
      action.onclick = async () => {
        try { await post('/console/api/activate', { version_id: v.version_id }); await load(); } catch (error) { alert(error.message); }
      };
    }
    // Deleting cannot be undone: the first click asks, the second deletes.
    const remove = el('button', { class: 'delete', 'data-version': v.version_id }, 'Delete');
    remove.onclick = async () => {
      if (remove.dataset.armed !== 'yes') { remove.dataset.armed = 'yes'; remove.textContent = `Delete v${v.number}?`; return; }
      try { await post('/console/api/delete-version', { version_id: v.version_id }); await load(); } catch (error) {
        say(document.getElementById('versions-status'), `v${v.number} not deleted: ${error.message}`, true);
        remove.dataset.armed = ''; remove.textContent = 'Delete';
      }
    };
    table.append(el('tr', { 'data-version': v.version_id, class: v.active ? 'active' : '' },
      el('td', { class: 'num' }, `v${v.number}`), el('td', {}, v.version_id.slice(0, 12)), el('td', {}, when(v.created_ms)),
      el('td', {}, el('code', {}, v.entry)), el('td', { class: 'num' }, String(v.matches)),
      el('td', { class: 'num' }, String(v.crashes)), el('td', { class: 'num' }, String(v.timeouts)),
      el('td', { class: 'num' }, String(v.illegal_outputs)), el('td', { class: 'num' }, `${v.cpu_ms_mean} / ${v.cpu_ms_max}`),
      el('td', {}, action, ' ', remove)));
    if (v.build_log) {
      table.append(el('tr', {}, el('td', { colspan: '10' },
        el('details', {}, el('summary', {}, `build log of v${v.number}`), el('pre', { class: 'log' }, v.build_log)))));
    }
  });
  if (!versions.length) table.append(el('tr', {}, el('td', { colspan: '10', class: 'muted' }, 'no version yet: upload one above')));
  return table;
}

function uploadForm() {
  const status = message('upload-status');
  const bar = el('progress', { id: 'upload-progress', max: '100', value: '0' });
  const form = el('form', { id: 'upload-form', class: 'panel' },
    el('h2', {}, 'Upload a new version'),
    el('p', {}, el('label', {}, 'an archive (.zip, .tar.gz) ', el('input', { type: 'file', name: 'archive', accept: '.zip,.tar.gz,.tgz' })),
      ' or a folder ', el('input', { type: 'file', name: 'folder', webkitdirectory: '', multiple: '' })),
    el('p', {}, el('label', {}, 'entry command ', el('input', { name: 'entry', required: '', placeholder: 'python3 bot.py', size: '40' })),
      ' ', el('label', {}, el('input', { type: 'checkbox', name: 'activate', value: '1' }), ' make it active')),
    el('p', {}, el('button', { type: 'submit' }, 'Upload'), ' ', bar), status);
  form.onsubmit = (e) => {
    e.preventDefault();
    const body = new FormData();
    body.append('csrf', me.csrf);
    body.append('entry', form.entry.value);
    if (form.activate.checked) body.append('activate', '1');
    if (form.archive.files.length) body.append('archive', form.archive.files[0]);
    [...form.folder.files].forEach((f) => { body.append('path', f.webkitRelativePath || f.name); body.append('files', f); });
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/console/api/versions');
    xhr.setRequestHeader('X-CSRF-Token', me.csrf);
    xhr.upload.onprogress = (p) => {
      if (!p.lengthComputable) return;
      bar.value = Math.round((100 * p.loaded) / p.total);
      document.body.dataset.uploadProgress = String(bar.value);
    };
    xhr.onload = async () => {
      let answer = {};
      try { answer = JSON.parse(xhr.responseText); } catch { answer = { error: `${xhr.status}` }; }
      if (xhr.status !== 200) { say(status, answer.error || `${xhr.status}`, true); return; }
      await load();
      document.getElementById('upload-progress').value = 100;
      say(document.getElementById('upload-status'), `version ${answer.version.version_id.slice(0, 12)} ${answer.created ? 'stored' : 'already stored'}`);
    };
    xhr.onerror = () => say(status, 'the upload failed', true);
    say(status, 'uploading...');
    xhr.send(body);
  };
  return form;
}

function arenasTable(arenas) {
  const table = el('table', { class: 'grid', id: 'my-arenas' },
    el('tr', {}, ...['arena', 'game', 'players', 'my ratings (μ − 3σ, games)', ''].map((h) => el('th', {}, h))));
  arenas.forEach((a) => {
    const button = el('button', { class: a.enrolled ? 'withdraw' : 'enroll' }, a.enrolled ? 'Withdraw' : 'Enroll');
    button.onclick = async () => {
      try { await post('/console/api/enroll', { arena_id: a.arena_id, withdraw: a.enrolled ? '1' : '0' }); await load(); } catch (error) { alert(error.message); }
    };
    const ratings = a.ratings.map((r) => `v${r.version}: ${r.conservative.toFixed(2)} (${r.games})`).join(' · ');
    table.append(el('tr', { 'data-arena': a.arena_id, 'data-enrolled': a.enrolled ? 'yes' : 'no' },
      el('td', {}, link(`/arenas/${encodeURIComponent(a.arena_id)}`, a.arena_id)), el('td', {}, a.game_id),
      el('td', { class: 'num' }, String(a.num_players)), el('td', {}, ratings || '—'), el('td', {}, button)));
  });
  if (!arenas.length) table.append(el('tr', {}, el('td', { colspan: '5', class: 'muted' }, 'this server has no arena')));
  return table;
}

function practiceForm(games, strengths) {
  const status = message('practice-status');
  const form = el('form', { id: 'practice-form', class: 'panel' },
    el('h2', {}, 'Practice against a house rung'),
    el('select', { name: 'game_id' }, ...games.map((g) => el('option', { value: g.game_id }, g.name))), ' ',
    el('select', { name: 'strength' }, ...strengths.map((s) => el('option', { value: s }, s))), ' ',
    el('button', { type: 'submit' }, 'Start and watch'), status);
  form.strength.value = 'heuristic';
  form.onsubmit = async (e) => {
    e.preventDefault();
    try {
      const made = await post('/console/api/practice', { game_id: form.game_id.value, strength: form.strength.value });
      window.location.href = `/matches/${encodeURIComponent(made.match_id)}`;
    } catch (error) { say(status, error.message, true); }
  };
  return form;
}

async function load(newToken = '') {
  const response = await fetch('/console/api/me', { headers: { Accept: 'application/json' } });
  if (response.status === 401) { me = null; signedOut(); return; }
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || `${response.status}`);
  me = answer;
  const signOut = el('button', { id: 'signout' }, 'Sign out');
  signOut.onclick = async () => { await post('/console/api/signout', {}); me = null; signedOut('signed out'); };
  const parts = [el('h1', {}, `${me.name} `, el('span', { class: 'muted', id: 'agent-id' }, me.agent_id), ' ', signOut)];
  if (newToken) {
    parts.push(el('div', { class: 'panel', id: 'new-token' }, el('h2', {}, 'Your api token (shown this once: keep it secret)'),
      el('code', {}, newToken)));
  }
  parts.push(el('h2', {}, 'Failed matches'), failuresTable(me.failures), uploadForm(),
    el('h2', {}, 'Versions'), message('versions-status'), versionsTable(me.versions),
    el('h2', {}, 'Arenas'), arenasTable(me.arenas), practiceForm(me.games, me.strengths),
    el('p', {}, link(`/agents/${encodeURIComponent(me.agent_id)}`, 'public page of this agent')));
  main().replaceChildren(...parts);
  document.body.dataset.signedIn = 'yes';
  document.body.dataset.loaded = String(Date.now());
}

load().catch((error) => main().replaceChildren(el('p', { class: 'badge error' }, error.message)));
