// The operator console (GET /console): a page over the operator API, nothing more. The token
// lives in this tab's sessionStorage and goes out as a header, never a cookie, so no other site
// can make the browser act with it. Every string from the API is put on the page as text
// (textContent), never as markup: a merchant named <img src=x onerror=...> shows those characters.
// The page offers what the operator's roles allow (GET /admin/v1/me); the API decides anyway.
'use strict';

const TOKEN_KEY = 'rewards.console.operatorToken';

const state = { me: null, view: 'claims', merchantId: null };

/** An element with text and attributes; children appended as given. Never innerHTML. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === 'text') node.textContent = value;
    else if (name === 'onclick') node.addEventListener('click', value);
    else if (name === 'onsubmit') node.addEventListener('submit', value);
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const money = (minor) => (typeof minor === 'number' ? (minor / 100).toFixed(2) : '');
const token = () => sessionStorage.getItem(TOKEN_KEY);

async function api(method, path, body, headers = {}) {
  const res = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${token()}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, body: json, text };
}

/** What the API answered to an action, shown as it came: status and body. */
function showAnswer(answer) {
  const box = document.getElementById('answer');
  box.replaceChildren(
    el('strong', { text: `HTTP ${answer.status}` }),
    el('pre', { text: JSON.stringify(answer.body, null, 2) }),
  );
  box.dataset.status = String(answer.status);
}

const can = (role) => Boolean(state.me && state.me.roles.includes(role));

function table(columns, rows, actions) {
  const head = el(
    'tr',
    {},
    ...columns.map(([title]) => el('th', { text: title })),
    actions ? el('th', { text: '' }) : null,
  );
  const body = rows.map((row) =>
    el(
      'tr',
      { 'data-id': row.id ?? row.approvalId ?? '' },
      ...columns.map(([, read]) => el('td', { text: String(read(row) ?? '') })),
      actions ? el('td', {}, ...actions(row)) : null,
    ),
  );
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...body));
}

function button(label, run, extra = {}) {
  return el('button', {
    type: 'button',
    text: label,
    ...extra,
    onclick: async (event) => {
      event.target.disabled = true;
      try {
        await run();
      } finally {
        event.target.disabled = false;
      }
    },
  });
}

async function act(method, path, body, headers) {
  const answer = await api(method, path, body, headers);
  showAnswer(answer);
  await render();
  return answer;
}

/** A form choosing the merchant the offers and statements tabs show (empty: none). */
function merchantPicker(id, label) {
  return el(
    'form',
    {
      id,
      onsubmit: (event) => {
        event.preventDefault();
        state.merchantId = event.target.elements.merchantId.value.trim() || null;
        void render();
      },
    },
    el('input', { name: 'merchantId', placeholder: 'merchant id (mp_...)', value: state.merchantId ?? '' }),
    el('button', { type: 'submit', text: label }),
  );
}

const VIEWS = {
  async claims() {
    const page = await api('GET', '/admin/v1/claims?status=needs_review&limit=100');
    if (page.status !== 200) return [el('p', { text: `HTTP ${page.status}` })];
    // Oldest first: the queue is worked from its far end.
    const claims = [...page.body.data].reverse();
    return [
      el('h2', { text: `Claims in review (${claims.length})` }),
      table(
        [
          ['Claim', (c) => c.id],
          ['Issuer', (c) => c.issuerId],
          ['Reason', (c) => c.reasonCode],
          ['Descriptor', (c) => c.evidence?.transaction?.merchantDescriptor],
          ['Computed', (c) => money((c.computedReward?.cashbackMinor ?? 0) + (c.computedReward?.brandedMinor ?? 0))],
          ['Filed', (c) => c.createdAt],
        ],
        claims,
        can('support')
          ? (c) => [
              button('Approve', () => act('POST', `/admin/v1/claims/${c.id}/approve`, {}), { class: 'approve' }),
              button(
                'Reject',
                () => act('POST', `/admin/v1/claims/${c.id}/reject`, { reasonCode: 'insufficient_evidence' }),
                {
                  class: 'reject',
                },
              ),
            ]
          : undefined,
      ),
    ];
  },

  async approvals() {
    const page = await api('GET', '/admin/v1/approvals?status=pending&limit=100');
    if (page.status !== 200) return [el('p', { text: `HTTP ${page.status}` })];
    return [
      el('h2', { text: `Waiting for a second operator (${page.body.data.length})` }),
      table(
        [
          ['Approval', (a) => a.approvalId],
          ['Action', (a) => a.action],
          ['Why', (a) => a.reason],
          ['Target', (a) => a.targetId],
          ['Asked by', (a) => a.makerId],
          ['Needs', (a) => a.requiredRole],
          ['Request', (a) => JSON.stringify(a.request.body)],
        ],
        page.body.data,
        (a) =>
          can(a.requiredRole) && a.makerId !== state.me.id
            ? [
                button('Approve', () => act('POST', `/admin/v1/approvals/${a.approvalId}/approve`), {
                  class: 'approve',
                }),
                button('Reject', () => act('POST', `/admin/v1/approvals/${a.approvalId}/reject`), { class: 'reject' }),
              ]
            : [el('span', { text: a.makerId === state.me.id ? 'yours: another operator decides' : '' })],
      ),
    ];
  },

  async statements() {
    // A merchant's statements when one is picked (a merchant calling about its payment); else the
    // first page of all of them.
    const query = state.merchantId ? `&merchantId=${encodeURIComponent(state.merchantId)}` : '';
    const page = await api('GET', `/admin/v1/statements?limit=100${query}`);
    if (page.status !== 200) return [el('p', { text: `HTTP ${page.status}` })];
    return [
      el('h2', { text: 'Statements' }),
      merchantPicker('statement-merchant-picker', 'Show statements'),
      table(
        [
          ['Statement', (s) => s.id],
          ['Merchant', (s) => s.merchantId],
          ['Period', (s) => s.period],
          ['Due', (s) => money(s.totalDueMinor)],
          ['Paid', (s) => money(s.paidMinor)],
          ['Status', (s) => s.status],
        ],
        page.body.data,
        (s) => [button('CSV', () => downloadCsv(s.id)), can('finance') && s.status !== 'paid' ? paymentForm(s) : null],
      ),
    ];
  },

  async offers() {
    const picker = merchantPicker('merchant-picker', 'Show offers');
    if (state.merchantId) return [el('h2', { text: 'Offers' }), picker, ...(await offersOf(state.merchantId))];
    const merchants = await api('GET', '/admin/v1/merchants?limit=100');
    if (merchants.status !== 200) return [el('p', { text: `HTTP ${merchants.status}` })];
    return [
      el('h2', { text: 'Offers' }),
      picker,
      table(
        [
          ['Merchant', (m) => m.name],
          ['Id', (m) => m.id],
          ['Category', (m) => m.category],
        ],
        merchants.body.data,
        (m) => [
          button('Offers', async () => {
            state.merchantId = m.id;
            await render();
          }),
        ],
      ),
    ];
  },

  async audit() {
    const page = await api('GET', '/admin/v1/audit-log?limit=100');
    if (page.status !== 200) return [el('p', { text: `HTTP ${page.status}` })];
    return [
      el('h2', { text: 'Audit log' }),
      table(
        [
          ['#', (r) => r.seq],
          ['When', (r) => r.createdAt],
          ['Who', (r) => r.actor],
          ['Action', (r) => r.action],
          ['Target', (r) => r.targetId],
          ['Outcome', (r) => r.outcome],
        ],
        page.body.data,
      ),
      button('Verify the chain', async () => showAnswer(await api('GET', '/admin/v1/audit-log/verify'))),
    ];
  },
};

/** One merchant's offers: budget, what of it is used, and the lift report on demand. */
async function offersOf(merchantId) {
  const merchant = await api('GET', `/admin/v1/merchants/${merchantId}`);
  if (merchant.status !== 200) return [el('p', { text: `HTTP ${merchant.status}` })];
  const offers = await api('GET', `/admin/v1/merchants/${merchantId}/offers?limit=100`);
  if (offers.status !== 200) return [el('p', { text: `HTTP ${offers.status}` })];
  return [
    el('h3', { text: merchant.body.name }),
    table(
      [
        ['Offer', (o) => o.title],
        ['Status', (o) => o.status],
        ['Budget', (o) => (o.budgetMinor === null ? 'none' : money(o.budgetMinor))],
        ['Used', (o) => (o.budget ? money(o.budget.usedMinor) : '')],
      ],
      offers.body.data,
      (o) => [button('Lift', async () => showAnswer(await api('GET', `/admin/v1/offers/${o.id}/lift`)))],
    ),
  ];
}

function paymentForm(statement) {
  const amount = el('input', {
    name: 'amountMinor',
    type: 'number',
    min: '1',
    value: String(statement.totalDueMinor - statement.paidMinor),
  });
  const reference = el('input', { name: 'reference', placeholder: 'bank reference', required: '' });
  return el(
    'form',
    {
      class: 'pay',
      onsubmit: async (event) => {
        event.preventDefault();
        await act(
          'POST',
          `/admin/v1/statements/${statement.id}/payments`,
          { amountMinor: Number(amount.value), reference: reference.value },
          { 'idempotency-key': crypto.randomUUID() },
        );
      },
    },
    amount,
    reference,
    el('button', { type: 'submit', text: 'Record payment' }),
  );
}

async function downloadCsv(statementId) {
  const res = await fetch(`/admin/v1/statements/${statementId}?format=csv`, {
    headers: { authorization: `Bearer ${token()}` },
  });
  const url = URL.createObjectURL(await res.blob());
  const link = el('a', { href: url, download: `${statementId}.csv` });
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

async function render() {
  const main = document.getElementById('view');
  main.replaceChildren(...(await VIEWS[state.view]()));
  for (const tab of document.querySelectorAll('nav button'))
    tab.classList.toggle('current', tab.dataset.view === state.view);
}

async function signIn(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
  const me = await api('GET', '/admin/v1/me');
  if (me.status !== 200) {
    sessionStorage.removeItem(TOKEN_KEY);
    document.getElementById('signin-error').textContent = 'That token is not an operator token.';
    return;
  }
  state.me = me.body;
  document.getElementById('signin').hidden = true;
  document.getElementById('console').hidden = false;
  document.getElementById('who').textContent = `${me.body.id} (${me.body.roles.join(', ')})`;
  await render();
}

function start() {
  document.getElementById('signin').addEventListener('submit', (event) => {
    event.preventDefault();
    void signIn(document.getElementById('token').value.trim());
  });
  document.getElementById('signout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  for (const tab of document.querySelectorAll('nav button'))
    tab.addEventListener('click', () => {
      state.view = tab.dataset.view;
      void render();
    });
  if (token()) void signIn(token());
}

start();
