// PicoClaw approval console. Every value that comes from the API (plans, diffs, summaries,
// reasons: much of it written by an LLM) reaches the page only through textContent or text
// nodes; no string is ever parsed as markup.
'use strict';
(() => {
  const TOKEN_KEY = 'picoclaw.approval.token';
  const LANG_KEY = 'picoclaw.approval.lang';
  // The console's language also goes to the server as a cookie, for the pages it serves itself
  // (a missing file under ui/); the API is asked in it with Accept-Language.
  const LANG_COOKIE = 'picoclaw_lang';
  // The console lives at <base>ui/; the API at <base>v1/.
  const BASE = location.pathname.replace(/ui\/.*$/, '');
  const MAX_DIFF_LINES = 5000;

  const I18N = {
    ja: {
      title: '承認コンソール', logout: 'ログアウト', refresh: '更新', back: '← 一覧へ',
      'login.title': '承認者トークンでログイン', 'login.token': '承認者トークン', 'login.submit': 'ログイン',
      'login.note': 'トークンはこのタブのセッションにだけ保存されます。',
      'login.bad': 'このトークンは承認者のものではありません。', 'login.expired': 'もう一度ログインしてください。',
      'aa.title': 'Auto-Approve', 'aa.off': 'Auto-Approve をオフにする', 'aa.on': 'Auto-Approve をオンにする',
      'aa.ttl': '有効時間', 'aa.routes': 'ルート（カンマ区切り、空=全部）', 'aa.paths': 'パス接頭辞（カンマ区切り）', 'aa.reason': '理由',
      'aa.taskTypes': 'タスク種別', 'aa.routesKey': 'ルート', 'aa.pathsKey': 'パス接頭辞', 'aa.deniedOps': '除外する操作',
      'aa.by': '設定者', 'aa.reasonKey': '理由', 'aa.expires': '期限', 'aa.remaining': '残り時間', 'aa.any': 'すべて',
      'aa.turnedOff': 'Auto-Approve をオフにしました（差し戻し {0} 件）。', 'aa.turnedOn': 'Auto-Approve をオンにしました。',
      'list.title': 'ジョブ', 'list.filter': '状態', 'list.empty': '該当するジョブはありません。',
      'col.id': 'ジョブ ID', 'col.route': 'ルート', 'col.summary': '概要', 'col.risk': 'リスク', 'col.files': 'ファイル',
      'col.age': '経過', 'col.expires': '期限まで',
      'job.summary': '概要', 'job.plan': '計画', 'job.approve': '承認する', 'job.approveSimilar': '承認して同種を30分許可', 'job.deny': '却下する', 'job.denyReason': '却下の理由',
      'job.ops': '操作', 'job.diff': '差分', 'job.audit': '監査ログ', 'job.route': 'ルート', 'job.taskType': 'タスク種別',
      'job.order': '依頼内容', 'job.requestedBy': '依頼者', 'job.requestedAt': '依頼日時', 'job.policy': 'ポリシー', 'job.policyHash': 'ポリシーのハッシュ',
      'job.risk': 'リスク', 'job.cost': '推定コスト', 'job.hash': '内容ハッシュ', 'job.session': 'セッション',
      'job.approved': '{0} を承認しました。', 'job.approvedSimilar': '{0} を承認し、同種の変更を30分自動承認にしました。', 'job.denied': '{0} を却下しました。', 'job.decided': '{0}：{1}（{2}）',
      'job.noFlags': 'フラグの付いた操作はありません。', 'job.flags': 'フラグ：', 'job.truncated': '（{0} 行以降は省略）',
      'job.stats': '{0} ファイル、+{1} −{2}',
      'op.type': '種類', 'op.action': '動作', 'op.target': '対象', 'op.flags': 'フラグ',
      'ev.time': '日時', 'ev.type': 'イベント', 'ev.actor': '実行者', 'ev.rule': 'ルール', 'ev.detail': '詳細', 'ev.hash': 'ハッシュ',
      'chain.ok': 'ハッシュチェーン：検証済み（{0} 件）', 'chain.bad': 'ハッシュチェーン：不一致（改ざんの可能性）',
      'st.pending': '承認待ち', 'st.granted': '承認', 'st.auto_approved': '自動承認', 'st.denied': '却下', 'st.expired': '期限切れ',
      'st.cancelled': '取消', 'st.executing': '実行中', 'st.completed': '完了', 'st.failed': '失敗', 'st.refused': 'ポリシー拒否', 'st.answered': '回答のみ（実行なし）',
      'st.approved': '承認済み', 'st.closed': '却下・期限切れ', 'st.all': 'すべて',
      'ev.requested': '承認依頼', 'ev.auto_approved': '自動承認', 'ev.refused': 'ポリシー拒否', 'ev.granted': '承認', 'ev.denied': '却下',
      'ev.expired': '期限切れ', 'ev.cancelled': '取消', 'ev.decision_rejected': '判断を拒否', 'ev.claimed': '実行の確保',
      'ev.claim_rejected': '確保を拒否', 'ev.auto_approval_revoked': '自動承認の取消', 'ev.execution_started': '実行開始',
      'ev.execution_completed': '実行完了', 'ev.execution_failed': '実行失敗', 'ev.execution_refused': '実行拒否', 'ev.answered': '回答（実行なし）',
      'ev.hash_mismatch': 'ハッシュ不一致',
      'risk.destructive': '破壊的', 'expired': '期限切れ', 'err': 'エラー：{0}',
      'err.network': '承認サービスに接続できません。', 'err.status': '承認サービスが HTTP {0} を返しました。',
      'risk.high': '高', 'risk.medium': '中', 'risk.low': '低', 'risk.claim': 'コーダーの申告：{0}', 'job.claim': 'コーダーの申告',
      'risk.computed': '承認サービスの判定', 'job.costConfirm': '続行の確認（見積もりが上限超え。実行するものはありません）',
      'age.s': '{0}秒', 'age.m': '{0}分', 'age.h': '{0}時間', 'age.d': '{0}日',
    },
    en: {
      title: 'Approval console', logout: 'Log out', refresh: 'Refresh', back: '← Back to list',
      'login.title': 'Log in with an approver token', 'login.token': 'Approver token', 'login.submit': 'Log in',
      'login.note': 'The token is kept only in this tab\'s session.',
      'login.bad': 'This token does not belong to an approver.', 'login.expired': 'Please log in again.',
      'aa.title': 'Auto-Approve', 'aa.off': 'Turn Auto-Approve off', 'aa.on': 'Turn Auto-Approve on',
      'aa.ttl': 'Duration', 'aa.routes': 'Routes (comma separated, empty = all)', 'aa.paths': 'Path prefixes (comma separated)', 'aa.reason': 'Reason',
      'aa.taskTypes': 'Task types', 'aa.routesKey': 'Routes', 'aa.pathsKey': 'Path prefixes', 'aa.deniedOps': 'Excluded operations',
      'aa.by': 'Set by', 'aa.reasonKey': 'Reason', 'aa.expires': 'Expires', 'aa.remaining': 'Remaining', 'aa.any': 'any',
      'aa.turnedOff': 'Auto-Approve is off ({0} jobs sent back).', 'aa.turnedOn': 'Auto-Approve is on.',
      'list.title': 'Jobs', 'list.filter': 'Status', 'list.empty': 'No jobs.',
      'col.id': 'Job ID', 'col.route': 'Route', 'col.summary': 'Summary', 'col.risk': 'Risk', 'col.files': 'Files',
      'col.age': 'Age', 'col.expires': 'Expires in',
      'job.summary': 'Summary', 'job.plan': 'Plan', 'job.approve': 'Approve', 'job.approveSimilar': 'Approve and allow similar for 30 min', 'job.deny': 'Deny', 'job.denyReason': 'Reason for denial',
      'job.ops': 'Operations', 'job.diff': 'Diff', 'job.audit': 'Audit trail', 'job.route': 'Route', 'job.taskType': 'Task type',
      'job.order': 'Order', 'job.requestedBy': 'Requested by', 'job.requestedAt': 'Requested at', 'job.policy': 'Policy', 'job.policyHash': 'Policy hash',
      'job.risk': 'Risk', 'job.cost': 'Estimated cost', 'job.hash': 'Content hash', 'job.session': 'Session',
      'job.approved': '{0} approved.', 'job.approvedSimilar': '{0} approved; similar changes are auto-approved for 30 min.', 'job.denied': '{0} denied.', 'job.decided': '{0}: {1} ({2})',
      'job.noFlags': 'No flagged operations.', 'job.flags': 'Flags: ', 'job.truncated': '(lines after {0} omitted)',
      'job.stats': '{0} files, +{1} −{2}',
      'op.type': 'Type', 'op.action': 'Action', 'op.target': 'Target', 'op.flags': 'Flags',
      'ev.time': 'Time', 'ev.type': 'Event', 'ev.actor': 'Actor', 'ev.rule': 'Rule', 'ev.detail': 'Detail', 'ev.hash': 'Hash',
      'chain.ok': 'Hash chain: verified ({0} events)', 'chain.bad': 'Hash chain: BROKEN (possible tampering)',
      'st.pending': 'Pending', 'st.granted': 'Granted', 'st.auto_approved': 'Auto-approved', 'st.denied': 'Denied', 'st.expired': 'Expired',
      'st.cancelled': 'Cancelled', 'st.executing': 'Executing', 'st.completed': 'Completed', 'st.failed': 'Failed', 'st.refused': 'Refused by policy', 'st.answered': 'Answered (no execution)',
      'st.approved': 'Approved', 'st.closed': 'Denied / expired', 'st.all': 'All',
      'ev.requested': 'Requested', 'ev.auto_approved': 'Auto-approved', 'ev.refused': 'Refused by policy', 'ev.granted': 'Granted', 'ev.denied': 'Denied',
      'ev.expired': 'Expired', 'ev.cancelled': 'Cancelled', 'ev.decision_rejected': 'Decision rejected', 'ev.claimed': 'Claimed',
      'ev.claim_rejected': 'Claim rejected', 'ev.auto_approval_revoked': 'Auto-approval revoked', 'ev.execution_started': 'Execution started',
      'ev.execution_completed': 'Execution completed', 'ev.execution_failed': 'Execution failed', 'ev.execution_refused': 'Execution refused', 'ev.answered': 'Answered (no execution)',
      'ev.hash_mismatch': 'Hash mismatch',
      'risk.destructive': 'destructive', 'expired': 'expired', 'err': 'Error: {0}',
      'err.network': 'The approval service cannot be reached.', 'err.status': 'The approval service answered HTTP {0}.',
      'risk.high': 'high', 'risk.medium': 'medium', 'risk.low': 'low', 'risk.claim': 'coder claims: {0}', 'job.claim': 'Coder\'s claim',
      'risk.computed': 'computed by approval', 'job.costConfirm': 'Continue confirmation (estimate over the limit; nothing runs)',
      'age.s': '{0}s', 'age.m': '{0}m', 'age.h': '{0}h', 'age.d': '{0}d',
    },
  };

  let lang = localStorage.getItem(LANG_KEY) === 'en' ? 'en' : 'ja';
  let listTimer = null;

  const $ = (sel) => document.querySelector(sel);
  const t = (key, ...args) => {
    let s = (I18N[lang] && I18N[lang][key]) || I18N.ja[key] || key;
    args.forEach((a, i) => { s = s.split('{' + i + '}').join(String(a)); });
    return s;
  };

  // el builds an element; strings among children become text nodes, never markup.
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'id' || k === 'title' || k === 'href' || k.startsWith('data-')) e.setAttribute(k, v);
      else throw new Error('el: unsupported property ' + k);
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c);
    }
    return e;
  }

  class APIError extends Error {
    constructor(status, code, message) { super(message || code || String(status)); this.status = status; this.code = code; }
  }

  const token = () => sessionStorage.getItem(TOKEN_KEY) || '';

  // api calls the REST API in the console's language: its error messages come in it.
  async function api(method, path, body, tok) {
    const headers = { Authorization: 'Bearer ' + (tok || token()), 'Accept-Language': lang };
    const init = { method, headers, cache: 'no-store' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let res;
    try { res = await fetch(BASE + path, init); } catch (_) { throw new APIError(0, 'unreachable', t('err.network')); }
    let data = null;
    try { data = await res.json(); } catch (_) { data = null; }
    if (!res.ok) throw new APIError(res.status, data && data.code, (data && data.message) || t('err.status', res.status));
    return data;
  }

  function toast(msg, bad) {
    const box = $('#toast');
    box.textContent = msg;
    box.className = bad ? 'bad' : '';
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.hidden = true; }, 5000);
  }

  function fail(err) {
    if (err instanceof APIError && (err.status === 401 || err.status === 403) && !token()) return;
    if (err instanceof APIError && err.status === 401) { logout(t('login.expired')); return; }
    toast(t('err', err.message || String(err)), true);
  }

  // --- formatting ---

  function fmtTime(iso) {
    if (!iso) return '—';
    const d = new Date(iso);
    return d.toLocaleString(lang === 'en' ? 'en-GB' : 'ja-JP', { hour12: false });
  }

  function fmtAge(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return t('age.s', s);
    if (s < 3600) return t('age.m', Math.floor(s / 60));
    if (s < 86400) return t('age.h', Math.floor(s / 3600));
    return t('age.d', Math.floor(s / 86400));
  }

  function fmtCountdown(ms) {
    if (ms <= 0) return t('expired');
    const s = Math.floor(ms / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    const pad = (n) => String(n).padStart(2, '0');
    return (h > 0 ? h + ':' + pad(m) : String(m)) + ':' + pad(sec);
  }

  // tick refreshes every age and countdown on the page from its data attributes.
  function tick() {
    const now = Date.now();
    document.querySelectorAll('[data-since]').forEach((e) => {
      const since = Date.parse(e.getAttribute('data-since'));
      e.textContent = isNaN(since) ? '—' : fmtAge(now - since);
    });
    document.querySelectorAll('[data-deadline]').forEach((e) => {
      const dl = Date.parse(e.getAttribute('data-deadline'));
      if (isNaN(dl)) { e.textContent = '—'; return; }
      e.textContent = fmtCountdown(dl - now);
      e.classList.toggle('soon', dl - now < 5 * 60 * 1000);
    });
  }

  const statusBadge = (s) => el('span', { class: 'badge st-' + s, 'data-status': s, text: t('st.' + s) });
  const chips = (list, cls) => (list || []).map((f) => el('span', { class: 'chip ' + (cls || ''), text: f }));
  const firstLine = (s) => (s || '').split('\n').find((l) => l.trim() !== '') || '';
  const actorText = (a) => (a ? (a.channel ? a.channel + ':' : '') + (a.display_name || a.id || '') : '—');

  // The risk approval computed leads; the rules that need a person and the flags follow; what
  // the coder claimed comes last, labelled as its claim.
  const riskLevels = ['high', 'medium', 'low'];
  const riskName = (l) => (riskLevels.includes(l) ? t('risk.' + l) : l);
  function claimText(r) {
    r = r || {};
    return [r.level ? riskName(r.level) : '—', r.destructive ? t('risk.destructive') : ''].filter(Boolean).join(' / ');
  }
  function riskCell(j) {
    const out = [];
    const c = j.computed_risk;
    if (c) out.push(el('span', { class: 'badge risk risk-' + (riskLevels.includes(c) ? c : 'unknown'), title: t('risk.computed'), text: riskName(c) }));
    (j.risk_rules || []).forEach((r) => out.push(' ', el('span', { class: 'chip flag', text: r })));
    (j.flags || []).forEach((f) => out.push(' ', el('span', { class: 'chip flag', text: f })));
    const r = j.risk || {};
    (r.compatibility_issues || []).forEach((x) => out.push(' ', el('span', { class: 'chip', text: x })));
    if (r.level || r.destructive) out.push(el('div', { class: 'muted claim', text: t('risk.claim', claimText(r)) }));
    return out.length ? out : ['—'];
  }

  function filesCell(j) {
    const s = j.stats || {};
    const paths = j.affected_paths || [];
    const out = [el('div', { text: t('job.stats', s.files || 0, s.additions || 0, s.deletions || 0) })];
    paths.slice(0, 3).forEach((p) => out.push(el('div', { class: 'muted', text: p })));
    if (paths.length > 3) out.push(el('div', { class: 'muted', text: '… +' + (paths.length - 3) }));
    return out;
  }

  // --- views ---

  function show(id) {
    for (const v of ['login-view', 'list-view', 'job-view']) $('#' + v).hidden = v !== id;
    $('#logout-btn').hidden = id === 'login-view';
    if (listTimer) { clearInterval(listTimer); listTimer = null; }
  }

  function applyLang() {
    document.documentElement.lang = lang;
    document.cookie = LANG_COOKIE + '=' + lang + '; path=' + BASE + 'ui/; SameSite=Strict' + (location.protocol === 'https:' ? '; Secure' : '');
    document.querySelectorAll('[data-i18n]').forEach((e) => { e.textContent = t(e.getAttribute('data-i18n')); });
    $('#lang-btn').textContent = lang === 'en' ? '日本語' : 'English';
  }

  function logout(msg) {
    sessionStorage.removeItem(TOKEN_KEY);
    show('login-view');
    const e = $('#login-error');
    e.textContent = msg || '';
    e.hidden = !msg;
    $('#token').value = '';
    $('#token').focus();
  }

  async function renderList() {
    show('list-view');
    const status = $('#status-filter').value;
    const q = status ? '?status=' + encodeURIComponent(status) : '';
    const [res] = await Promise.all([api('GET', 'v1/jobs' + q), renderAutoApprove()]);
    const tbody = $('#jobs tbody');
    tbody.replaceChildren(...res.jobs.map((j) => el('tr', { 'data-job-id': j.job_id },
      el('td', null, el('a', { class: 'job-link', href: '#/jobs/' + encodeURIComponent(j.job_id), text: j.job_id }),
        j.status !== 'pending' ? ' ' : null, j.status !== 'pending' ? statusBadge(j.status) : null),
      el('td', { text: j.route || '—' }),
      el('td', { class: 'summary text', text: j.summary || firstLine(j.plan) }),
      el('td', null, ...riskCell(j)),
      el('td', null, ...filesCell(j)),
      el('td', { class: 'age', 'data-since': j.requested_at }),
      el('td', j.status === 'pending' && j.expires_at ? { class: 'countdown', 'data-deadline': j.expires_at } : { text: '—' }),
    )));
    $('#jobs-empty').hidden = res.jobs.length > 0;
    tick();
    listTimer = setInterval(() => { if (location.hash === '' || location.hash === '#/') renderList().catch(fail); }, 15000);
  }

  async function renderAutoApprove() {
    const st = await api('GET', 'v1/auto-approve?locale=' + lang);
    $('#aa-status').textContent = st.status_text || '';
    const dl = $('#aa-scope');
    const g = st.active ? st.grant : null;
    dl.hidden = !g;
    $('#aa-active-controls').hidden = !g;
    $('#aa-form').hidden = !!g || st.unavailable;
    if (!g) { dl.replaceChildren(); return; }
    const any = (l) => (l && l.length ? l.join(', ') : t('aa.any'));
    const rows = [
      ['aa.taskTypes', any(g.task_types)], ['aa.routesKey', any(g.routes)], ['aa.pathsKey', any(g.path_prefixes)],
      ['aa.deniedOps', g.denied_operations && g.denied_operations.length ? g.denied_operations.join(', ') : '—'],
      ['aa.by', actorText(g.created_by)], ['aa.reasonKey', g.reason || '—'], ['aa.expires', fmtTime(g.expires_at)],
    ];
    dl.replaceChildren(...rows.flatMap(([k, v]) => [el('dt', { text: t(k) }), el('dd', { text: v })]),
      el('dt', { text: t('aa.remaining') }), el('dd', { id: 'aa-remaining', class: 'countdown', 'data-deadline': g.expires_at }));
    tick();
  }

  async function renderJob(id) {
    show('job-view');
    const path = 'v1/jobs/' + encodeURIComponent(id);
    const [j, ev] = await Promise.all([api('GET', path + '?locale=' + lang), api('GET', path + '/events')]);
    $('#job-id').textContent = j.job_id;
    $('#job-status').replaceWith(Object.assign(statusBadge(j.status), { id: 'job-status' }));
    const exp = $('#job-expiry');
    exp.replaceChildren();
    if (j.status === 'pending' && j.expires_at) exp.append(t('col.expires') + ' ', el('span', { class: 'countdown', 'data-deadline': j.expires_at }));
    const cost = j.cost || {};
    const meta = [
      ['job.route', j.route || '—'], ['job.taskType', j.task_type || '—'], ['job.order', j.order || '—'],
      ['job.requestedBy', actorText(j.requested_by)], ['job.requestedAt', fmtTime(j.requested_at)], ['job.session', j.session_id || '—'],
      ['job.policy', (j.policy_rule || '—') + ((j.policy_reason_text || j.policy_reason) ? ' — ' + (j.policy_reason_text || j.policy_reason) : '')],
      ['job.risk', [riskName(j.computed_risk || '—') + ' (' + t('risk.computed') + ')', (j.risk_rules || []).join(', ')].filter(Boolean).join(' — ')],
      ['job.claim', claimText(j.risk)],
      ['job.cost', cost.estimated_tokens || cost.estimated_cost_usd ? (cost.estimated_tokens || 0) + ' tokens / $' + (cost.estimated_cost_usd || 0).toFixed(2) : '—'],
      ['job.hash', j.content_hash || '—'],
      ['job.policyHash', j.policy_hash || '—'],
    ];
    $('#job-meta').replaceChildren(...meta.flatMap(([k, v]) => [el('dt', { text: t(k) }), el('dd', { class: 'text', text: v })]));
    $('#job-summary').textContent = (j.cost_confirmation ? t('job.costConfirm') + '\n' : '') + (j.summary || '—');
    $('#plan').textContent = j.plan || '—';

    const pending = j.status === 'pending';
    $('#decision').hidden = !pending;
    $('#approve-btn').disabled = false;
    $('#similar-btn').disabled = false;
    // A cost confirmation is approved in the chat that asked (its approval makes the call there).
    $('#approve-btn').hidden = !!j.cost_confirmation;
    $('#similar-btn').hidden = !!j.cost_confirmation;
    $('#deny-btn').disabled = false;
    const decided = $('#decided');
    decided.hidden = pending;
    decided.textContent = pending ? '' : t('job.decided', t('st.' + j.status), actorText(j.decided_by), fmtTime(j.decided_at))
      + (j.deny_reason ? ' — ' + j.deny_reason : '');

    const flags = $('#job-flags');
    flags.replaceChildren(...(j.flags && j.flags.length ? [t('job.flags'), ...chips(j.flags, 'flag')] : [t('job.noFlags')]));
    $('#ops tbody').replaceChildren(...j.operations.map((op) => el('tr', { class: op.flags.length ? 'flagged' : '', 'data-op': String(op.index) },
      el('td', { text: String(op.index + 1) }), el('td', { text: op.type }), el('td', { text: op.action }),
      el('td', { class: 'text', text: op.target }), el('td', null, ...chips(op.flags, 'flag')))));

    const s = j.stats || {};
    $('#diff-stats').textContent = t('job.stats', s.files || 0, s.additions || 0, s.deletions || 0);
    $('#diff').replaceChildren(...diffLines(j.patch || ''));
    renderEvents(ev);
    tick();
  }

  // diffLines renders a unified diff, Markdown fences or JSON commands as coloured lines.
  function diffLines(text) {
    let lines = jsonCommandLines(text);
    if (!lines) {
      const raw = text.split('\n');
      lines = raw.map((l, i) => {
        let cls = '';
        // "--- a/x" / "+++ b/x" are file headers only as a pair; alone they are a removed "-- …"
        // or an added "++ …" line.
        const header = (l.startsWith('--- ') && (raw[i + 1] || '').startsWith('+++ '))
          || (l.startsWith('+++ ') && (raw[i - 1] || '').startsWith('--- '));
        if (header || /^(diff --git |index [0-9a-f]+\.\.|```)/.test(l)) cls = 'file';
        else if (l.startsWith('@@')) cls = 'hunk';
        else if (l.startsWith('+')) cls = 'add';
        else if (l.startsWith('-')) cls = 'del';
        return [cls, l];
      });
    }
    const out = lines.slice(0, MAX_DIFF_LINES).map(([cls, l]) => el('div', { class: 'line ' + cls, text: l === '' ? ' ' : l }));
    if (lines.length > MAX_DIFF_LINES) out.push(el('div', { class: 'line muted', text: t('job.truncated', MAX_DIFF_LINES) }));
    return out;
  }

  function jsonCommandLines(text) {
    const trimmed = text.trim();
    if (!trimmed.startsWith('[') && !trimmed.startsWith('{')) return null;
    let cmds;
    try { cmds = JSON.parse(trimmed); } catch (_) { return null; }
    if (!Array.isArray(cmds)) cmds = Array.isArray(cmds.operations) ? cmds.operations : [cmds];
    const lines = [];
    for (const c of cmds) {
      if (!c || typeof c !== 'object') continue;
      lines.push(['file', [c.type, c.action, c.target || c.path || c.command].filter(Boolean).join(' ')]);
      const body = typeof c.content === 'string' ? c.content : (typeof c.diff === 'string' ? c.diff : null);
      if (body === null) {
        const rest = Object.assign({}, c);
        delete rest.type; delete rest.action; delete rest.target;
        if (Object.keys(rest).length) lines.push(['', JSON.stringify(rest)]);
        continue;
      }
      const sign = c.action === 'delete' ? '-' : '+';
      body.replace(/\n$/, '').split('\n').forEach((l) => lines.push([sign === '+' ? 'add' : 'del', sign + l]));
    }
    return lines;
  }

  function eventDetail(e) {
    const p = e.payload || {};
    if (e.type === 'requested') return p.content_hash ? 'content ' + String(p.content_hash).slice(0, 12) : '';
    return ['reason', 'attempt', 'status', 'grant_id', 'executor_id', 'detail', 'source']
      .filter((k) => p[k] !== undefined && p[k] !== '' && typeof p[k] !== 'object')
      .map((k) => k + ': ' + p[k]).join(' · ');
  }

  function renderEvents(ev) {
    // The server verifies every hash; the page also checks that each link points at its predecessor.
    let linked = true;
    ev.events.forEach((e, i) => { if (i > 0 && e.prev_hash !== ev.events[i - 1].hash) linked = false; });
    const ok = ev.chain_valid && linked;
    const badge = $('#chain-status');
    badge.className = 'badge ' + (ok ? 'ok' : 'bad');
    badge.setAttribute('data-valid', String(ok));
    badge.textContent = ok ? t('chain.ok', ev.events.length) : t('chain.bad');
    $('#events tbody').replaceChildren(...ev.events.map((e) => el('tr', { 'data-event-type': e.type },
      el('td', { text: String(e.seq) }), el('td', { text: fmtTime(e.created_at) }),
      el('td', null, el('span', { text: t('ev.' + e.type) }), ' ', el('span', { class: 'muted', text: '(' + e.type + ')' })),
      el('td', { text: actorText(e.actor) }), el('td', { text: e.policy_rule || '—' }),
      el('td', { class: 'detail text', text: eventDetail(e) }),
      el('td', { class: 'hash', title: 'hash ' + e.hash + '\nprev ' + (e.prev_hash || '—'), text: e.hash.slice(0, 12) }))));
  }

  // --- actions ---

  async function decide(kind) {
    const id = $('#job-id').textContent;
    $('#approve-btn').disabled = true;
    $('#similar-btn').disabled = true;
    $('#deny-btn').disabled = true;
    try {
      const path = 'v1/jobs/' + encodeURIComponent(id) + '/' + kind;
      if (kind === 'approve') await api('POST', path);
      else if (kind === 'approve-similar') await api('POST', path, { ttl: '30m' });
      else await api('POST', path, { reason: $('#deny-reason').value.trim() });
      $('#deny-reason').value = '';
      toast(t({ approve: 'job.approved', 'approve-similar': 'job.approvedSimilar' }[kind] || 'job.denied', id));
    } catch (err) {
      fail(err);
    }
    await renderJob(id).catch(fail);
  }

  async function autoApproveOff() {
    try {
      const res = await api('DELETE', 'v1/auto-approve?reason=' + encodeURIComponent('console') + '&locale=' + lang);
      toast(t('aa.turnedOff', res.revoked_jobs || 0));
    } catch (err) { fail(err); }
    await renderAutoApprove().catch(fail);
  }

  async function autoApproveOn(ev) {
    ev.preventDefault();
    const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
    try {
      await api('PUT', 'v1/auto-approve?locale=' + lang, {
        ttl: $('#aa-ttl').value, routes: list($('#aa-routes').value), path_prefixes: list($('#aa-paths').value),
        reason: $('#aa-reason').value.trim(),
      });
      toast(t('aa.turnedOn'));
    } catch (err) { fail(err); }
    await renderAutoApprove().catch(fail);
  }

  async function login(ev) {
    ev.preventDefault();
    const tok = $('#token').value.trim();
    const errBox = $('#login-error');
    try {
      await api('GET', 'v1/auto-approve', undefined, tok);
    } catch (err) {
      errBox.textContent = err instanceof APIError && (err.status === 401 || err.status === 403) ? t('login.bad') : t('err', err.message);
      errBox.hidden = false;
      return;
    }
    errBox.hidden = true;
    sessionStorage.setItem(TOKEN_KEY, tok);
    $('#token').value = '';
    route();
  }

  function route() {
    if (!token()) { logout(); return; }
    const m = location.hash.match(/^#\/jobs\/([^/]+)$/);
    const p = m ? renderJob(decodeURIComponent(m[1])) : renderList();
    p.catch(fail);
  }

  document.addEventListener('DOMContentLoaded', () => {
    applyLang();
    $('#login-form').addEventListener('submit', login);
    $('#logout-btn').addEventListener('click', () => logout());
    $('#lang-btn').addEventListener('click', () => {
      lang = lang === 'en' ? 'ja' : 'en';
      localStorage.setItem(LANG_KEY, lang);
      applyLang();
      if (token()) route();
    });
    $('#refresh-btn').addEventListener('click', () => renderList().catch(fail));
    $('#status-filter').addEventListener('change', () => renderList().catch(fail));
    $('#approve-btn').addEventListener('click', () => decide('approve'));
    $('#similar-btn').addEventListener('click', () => decide('approve-similar'));
    $('#deny-btn').addEventListener('click', () => decide('deny'));
    $('#aa-off-btn').addEventListener('click', autoApproveOff);
    $('#aa-form').addEventListener('submit', autoApproveOn);
    window.addEventListener('hashchange', route);
    setInterval(tick, 1000);
    route();
  });
})();
