// Chromium's virtual WebAuthn authenticator (DevTools protocol), attached to a page: a platform
// authenticator with resident keys and user verification that answers at once, so passkey
// ceremonies run in a headless browser without a person or a device.
import type { Page } from 'playwright-core';

export async function attachVirtualAuthenticator(page: Page): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}
