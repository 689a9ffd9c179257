// The sign-in page's passkey button (api/app-area/sign-in.ts). The password form works without it.
(() => {
  const $ = (id) => document.getElementById(id);
  const wa = window.SimpleWebAuthnBrowser;
  if (!wa || !wa.browserSupportsWebAuthn()) return; // password only
  $('passkey-section').hidden = false;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const next = document.querySelector('input[name="next"]').value;
  const post = async (path, body) => {
    const res = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'X-CSRF-Token': csrf },
      body: JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
    const data = await res.json().catch(() => null);
    if (!res.ok) throw new Error((data && data.detail) || 'the service answered ' + res.status);
    return data;
  };
  $('passkey-sign-in').addEventListener('click', async () => {
    const status = $('passkey-status');
    $('passkey-sign-in').disabled = true;
    status.textContent = 'Waiting for your passkey…';
    try {
      const optionsJSON = await post('/app/sign-in/passkey/options', {});
      const response = await wa.startAuthentication({ optionsJSON });
      const done = await post('/app/sign-in/passkey', { response, next });
      status.textContent = 'Signed in.';
      location.assign(done.redirect);
    } catch (e) {
      status.textContent = 'Passkey sign-in did not work: ' + e.message;
      $('passkey-sign-in').disabled = false;
    }
  });
})();
