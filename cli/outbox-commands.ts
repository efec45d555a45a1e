// `npx guestpass outbox ...`: the messages pass delivery wrote to the data folder.
import type { Config } from '../shared/config.js';
import { listOutbox, outboxDir } from '../shared/delivery/outbox.js';
import { integerArg, noPositionals, optional, parse, UsageError } from './cli-args.js';
import type { Result } from './cli-kit.js';

/** The messages pass delivery wrote to `{dataDir}/outbox` while no SMTP_URL or SMS provider is set. */
export async function outboxCommand(args: string[], config: Config): Promise<Result> {
  const [action, ...rest] = args;
  if (action !== 'list') throw new UsageError('outbox list [--limit N]');
  const { values, positionals } = parse(rest, { limit: { type: 'string' } });
  noPositionals(positionals);
  const limit = integerArg(optional(values, 'limit') ?? '10', '--limit');
  const dir = outboxDir(config.dataDir);
  const messages = await listOutbox(dir, limit);
  const text = messages.map((m) =>
    [
      `${m.createdAt}  ${m.channel.padEnd(5)}  ${m.to}  ${m.subject ?? m.text ?? ''}`,
      ...(m.link ? [`  ${m.link}`] : []),
      `  ${m.file}`,
    ].join('\n'),
  );
  return {
    json: {
      dir,
      messages: messages.map((m) => ({ created_at: m.createdAt, channel: m.channel, to: m.to, subject: m.subject, text: m.text, link: m.link, file: m.file })),
    },
    text: messages.length === 0 ? `no messages in ${dir}` : text.join('\n'),
  };
}
