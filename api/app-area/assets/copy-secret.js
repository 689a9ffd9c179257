// Copy buttons of the account area (a new key, a new webhook secret): no inline handlers, so the
// strict Content-Security-Policy holds. Without JavaScript the value stays selectable in its field.
for (const button of document.querySelectorAll('button[data-copy]')) {
  button.addEventListener('click', async () => {
    const field = document.getElementById(button.getAttribute('data-copy'));
    const status = button.parentElement.querySelector('[data-copy-status]');
    if (!field) return;
    try {
      await navigator.clipboard.writeText(field.value);
      if (status) status.textContent = 'Copied.';
    } catch {
      field.select();
      if (status) status.textContent = 'Press Ctrl+C (or Cmd+C) to copy.';
    }
  });
}
