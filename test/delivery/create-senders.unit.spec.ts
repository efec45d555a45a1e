import { expect } from 'chai';
import { createDeliverySenders } from '../../shared/delivery/create-senders.js';
import { DeliveryFailure } from '../../shared/delivery/delivery-ports.js';
import { classifySmtpError } from '../../shared/delivery/smtp-mail-sender.js';

describe('createDeliverySenders', () => {
  it('picks SMTP and the webhook when configured, and describes them without credentials', async () => {
    const senders = createDeliverySenders(
      {
        mail: { smtpUrl: 'smtps://mailer:p%40ss@smtp.example.com:465?name=x', from: 'Acme Passes <passes@acme.test>' },
        sms: { provider: 'webhook', url: 'https://hook:secret@sms.example.com/send?key=abc', authToken: 'tok' },
        dataDir: '/tmp/unused',
        publicBaseUrl: 'https://passes.acme.test',
      },
      'https://passes.acme.test',
    );
    try {
      expect([senders.mail.kind, senders.sms.kind]).to.deep.equal(['smtp', 'webhook']);
      expect(senders.mailFrom).to.equal('Acme Passes <passes@acme.test>');
      const line = senders.describe();
      expect(line).to.equal('mail: smtp smtps://smtp.example.com:465 from Acme Passes <passes@acme.test>; sms: webhook https://sms.example.com/send');
      for (const secret of ['mailer', 'p%40ss', 'secret', 'key=abc', 'tok']) expect(line).not.to.include(secret);
    } finally {
      await senders.mail.close();
    }
  });

  it('picks Twilio, and the default sender address from the base URL', () => {
    const senders = createDeliverySenders(
      {
        mail: null,
        sms: { provider: 'twilio', baseUrl: 'https://api.twilio.com', accountSid: 'AC123', authToken: 'twilio-secret', from: '+15557654321' },
        dataDir: '/tmp/data',
        publicBaseUrl: null,
      },
      'http://127.0.0.1:8080',
    );
    expect([senders.mail.kind, senders.sms.kind]).to.deep.equal(['outbox', 'twilio']);
    expect(senders.mailFrom).to.equal('Guest Pass <no-reply@127.0.0.1>');
    expect(senders.describe()).to.equal('mail: outbox /tmp/data/outbox; sms: twilio https://api.twilio.com from +15557654321');
  });
});

describe('classifySmtpError', () => {
  const classify = (error: object) => {
    const failure = classifySmtpError(Object.assign(new Error('raw text to ada@example.com'), error));
    expect(failure).to.be.instanceOf(DeliveryFailure);
    expect(failure.message).not.to.include('ada@example.com');
    return [(failure as DeliveryFailure).errorClass, (failure as DeliveryFailure).permanent];
  };

  it('reads the reply code and the command', () => {
    expect(classify({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550 })).to.deep.equal(['recipient_refused', true]);
    expect(classify({ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 452 })).to.deep.equal(['provider_unavailable', false]);
    expect(classify({ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 553 })).to.deep.equal(['provider_rejected', true]);
    expect(classify({ code: 'EMESSAGE', command: 'DATA', responseCode: 554 })).to.deep.equal(['provider_rejected', true]);
    expect(classify({ code: 'EAUTH', command: 'AUTH PLAIN', responseCode: 535 })).to.deep.equal(['provider_rejected', true]);
    // 503 is a bad sequence of commands: a new connection may do.
    expect(classify({ code: 'EPROTOCOL', command: 'RCPT TO', responseCode: 503 })).to.deep.equal(['provider_unavailable', false]);
    expect(classify({ code: 'ECONNECTION', command: 'CONN', responseCode: 421 })).to.deep.equal(['provider_unavailable', false]);
  });

  it('reads the error code when no reply came', () => {
    expect(classify({ code: 'EENVELOPE', command: 'API' })).to.deep.equal(['recipient_refused', true]);
    expect(classify({ code: 'ENOAUTH' })).to.deep.equal(['provider_rejected', true]);
    for (const code of ['ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'ECONNREFUSED', 'ECONNRESET', 'EABORT']) {
      expect(classify({ code })).to.deep.equal(['provider_unavailable', false]);
    }
  });

  it('leaves an error it does not know as it is: a bug the reactor retries', () => {
    const bug = new TypeError('undefined is not a function');
    expect(classifySmtpError(bug)).to.equal(bug);
  });
});
