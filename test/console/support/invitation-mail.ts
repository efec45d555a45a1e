// The invitation email in the outbox folder (the invitation mail worker writes one per pending
// invitation): waited for, since the worker polls.
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { findPart, parseMimeMessage } from '../../../shared/delivery/mime-reader.js';

/** The join link of the invitation email to `to` in the outbox folder `dir`. */
export async function invitationLinkFor(dir: string, to: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    for (const name of (await readdir(dir).catch(() => [] as string[])).filter((n) => n.endsWith('email.eml'))) {
      const message = parseMimeMessage(await readFile(path.join(dir, name)));
      if (message.header('to') !== to) continue;
      const link = /https?:\/\/\S+\/invitations\/join\/\S+/.exec(findPart(message, 'text/plain')!.text)?.[0];
      if (link !== undefined) return link;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no invitation email to ${to} reached the outbox within 15 s`);
}
