import { expect } from 'chai';
import { ConflictError, ValidationError } from '../../shared/errors.js';
import { fold } from '../../shared/domain/decider.js';
import type { SignInSessionEvent } from '../../shared/oauth/oauth-events.js';
import { sha256Hex } from '../../shared/oauth/opaque-credentials.js';
import {
  SESSION_LIFETIME_SECONDS,
  activeSession,
  newSessionSecret,
  newSid,
  sessionHashOf,
  signInSessionDecider,
  type SignInSessionCommand,
} from '../../shared/sign-in/session-decider.js';
import { deciderSpec } from '../support/given-when-then.js';
import { expectSchemaValid } from '../oauth/oauth-fixtures.js';

const spec = deciderSpec(signInSessionDecider);
const secret = 'c2Vzc2lvbi1zZWNyZXQtMjU2LWJpdHMtZm9yLXRlc3Q';
const sessionHash = sha256Hex(secret);
const data = { sessionHash, sid: 'sid_0123456789abcdef', userId: 42, orgId: 7, authTime: '2025-06-01T10:00:00.000Z', amr: ['pwd', 'otp', 'mfa'] as const };
const started: SignInSessionEvent = { type: 'SignInSessionStarted', data: { ...data, amr: [...data.amr] } };
const ended: SignInSessionEvent = { type: 'SignInSessionEnded', data: { sessionHash, sid: data.sid, reason: 'logout' } };
const start: SignInSessionCommand = { type: 'StartSignInSession', data: { ...data, amr: [...data.amr] } };
const end = (reason: 'logout' | 'replaced'): SignInSessionCommand => ({ type: 'EndSignInSession', data: { reason } });

describe('sign-in session decider', () => {
  describe('StartSignInSession', () => {
    it('given no session, records SignInSessionStarted (schema-valid)', () => {
      expectSchemaValid(spec.given([]).when(start).then([started]));
    });

    it('records each amr value once', () => {
      spec
        .given([])
        .when({ type: 'StartSignInSession', data: { ...data, amr: ['pwd', 'pwd'] } })
        .then([{ type: 'SignInSessionStarted', data: { ...data, amr: ['pwd'] } }]);
    });

    it('refuses a second start on one stream (a fresh secret never collides: it is a bug, not a retry)', () => {
      spec.given([started]).when(start).thenThrows(ConflictError);
      spec.given([started, ended]).when(start).thenThrows(ConflictError);
    });

    it('refuses a malformed sid, an empty amr or an unreadable auth time', () => {
      spec.given([]).when({ type: 'StartSignInSession', data: { ...data, amr: ['pwd'], sid: 'short' } }).thenThrows(ValidationError);
      spec.given([]).when({ type: 'StartSignInSession', data: { ...data, amr: [] } }).thenThrows(ValidationError);
      spec.given([]).when({ type: 'StartSignInSession', data: { ...data, amr: ['pwd'], authTime: 'yesterday' } }).thenThrows(ValidationError);
    });
  });

  describe('EndSignInSession', () => {
    it('given an active session, records SignInSessionEnded with the reason', () => {
      expectSchemaValid(spec.given([started]).when(end('logout')).then([ended]));
      spec.given([started]).when(end('replaced')).then([{ type: 'SignInSessionEnded', data: { sessionHash, sid: data.sid, reason: 'replaced' } }]);
    });

    it('records nothing for an ended or never started session (signing out twice is fine)', () => {
      spec.given([started, ended]).when(end('logout')).thenNothing();
      spec.given([]).when(end('logout')).thenNothing();
    });
  });

  describe('activeSession', () => {
    const at = (iso: string) => new Date(iso);
    it('is the session while it is active and younger than its lifetime', () => {
      const state = fold(signInSessionDecider, [started]);
      expect(activeSession(state, at('2025-06-01T10:05:00.000Z'))).to.deep.equal({
        userId: 42,
        orgId: 7,
        authTime: data.authTime,
        amr: ['pwd', 'otp', 'mfa'],
        sid: data.sid,
      });
      const lastMoment = new Date(Date.parse(data.authTime) + SESSION_LIFETIME_SECONDS * 1000 - 1);
      expect(activeSession(state, lastMoment)).to.not.equal(null);
      expect(activeSession(state, new Date(lastMoment.getTime() + 1))).to.equal(null);
    });

    it('is null before the start and after the end', () => {
      expect(activeSession(fold(signInSessionDecider, []), at('2025-06-01T10:05:00.000Z'))).to.equal(null);
      expect(activeSession(fold(signInSessionDecider, [started, ended]), at('2025-06-01T10:05:00.000Z'))).to.equal(null);
    });
  });

  describe('secrets and ids', () => {
    it('makes 256-bit cookie secrets and sids that fit the sid pattern, all distinct', () => {
      const secrets = new Set(Array.from({ length: 50 }, newSessionSecret));
      expect(secrets.size).to.equal(50);
      for (const s of secrets) expect(s).to.match(/^[A-Za-z0-9_-]{43}$/);
      const sid = newSid();
      expect(sid).to.match(/^[A-Za-z0-9_-]{16,64}$/);
      expect(newSid()).to.not.equal(sid);
    });

    it('names the stream by the SHA-256 of a well-formed secret only', () => {
      expect(sessionHashOf(secret)).to.equal(sessionHash);
      expect(sessionHashOf(undefined)).to.equal(null);
      expect(sessionHashOf('')).to.equal(null);
      expect(sessionHashOf(`${secret}x`)).to.equal(null);
      expect(sessionHashOf('a'.repeat(42) + '!')).to.equal(null);
    });
  });
});
