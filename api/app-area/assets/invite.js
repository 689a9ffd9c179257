// The invitation page (api/app-area/sign-in.ts): the one-time token is read from the URL
// fragment (never sent to the server in a URL), removed from the address bar at once, and posted
// in JSON bodies with the page's CSRF token. The owner sets a passkey or a password.
(() => {
  const $ = (id) => document.getElementById(id);
  const token = location.hash.slice(1);
  history.replaceState(null, '', location.pathname);
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const wa = window.SimpleWebAuthnBrowser;
  const post = async (path, body) => {
    const res = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify({ token, ...body }),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) throw new Error((data && data.detail) || 'the service answered ' + res.status);
    return data;
  };
  const fail = (e, fatal) => {
    const box = $('invite-error');
    box.textContent = (fatal ? 'This invitation cannot be used: ' : '') + e.message;
    box.hidden = false;
    if (fatal) {
      $('invitation').hidden = true;
      $('invite-status').textContent = 'This invitation cannot be used.';
    }
  };
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) {
    fail(new Error('the link is incomplete; open the whole link you were sent'), true);
    return;
  }
  post('/app/invite/lookup', {}).then(
    (inv) => {
      $('invite-account').textContent = inv.account;
      $('invite-username').value = inv.account;
      $('invite-expires').textContent = new Date(inv.expires_at).toUTCString();
      $('invite-status').textContent = 'Invitation for ' + inv.account + ': choose how you will sign in.';
      if (wa && wa.browserSupportsWebAuthn()) $('invite-passkey-section').hidden = false;
      $('invitation').hidden = false;
    },
    (e) => fail(e, true),
  );
  const finished = (done) => {
    $('invite-status').textContent = 'Done: you are signed in.';
    location.assign(done.redirect);
  };
  $('create-passkey').addEventListener('click', async () => {
    $('create-passkey').disabled = true;
    $('invite-error').hidden = true;
    $('invite-status').textContent = 'Follow your browser to create the passkey…';
    try {
      const optionsJSON = await post('/app/invite/passkey/options', {});
      const response = await wa.startRegistration({ optionsJSON });
      finished(await post('/app/invite/passkey', { response }));
    } catch (e) {
      fail(e, /used|expired|newer|not known/.test(e.message));
      $('create-passkey').disabled = false;
    }
  });
  $('password-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    $('invite-error').hidden = true;
    const password = $('new-password').value;
    if (password !== $('confirm-password').value) {
      fail(new Error('the two passwords are not the same'));
      $('confirm-password').focus();
      return;
    }
    try {
      finished(await post('/app/invite/password', { password }));
    } catch (e) {
      fail(e, /used|expired|newer|not known/.test(e.message));
    }
  });
})();
