// What the pass page shows, decided without I/O: each pass's state (usable, revoked, expired,
// used), whether its QR code may be shown (only while usable), and whether the guest can still
// confirm the visit. The routes load the batch, ask this module which QR codes to draw, and hand
// the result to the view.
import type { PassStatus } from '../../shared/domain/events.js';
import type { QrSvg } from './qr-svg.js';

/** One pass of the batch as the read model has it. */
export interface BatchPass {
  readonly publicId: string;
  readonly status: PassStatus;
  readonly validUntil: Date;
}

/** What a pass's card shows. Only a usable pass carries a QR code: the type admits no other. */
export type PassCard =
  | { readonly kind: 'usable'; readonly confirmed: boolean; readonly qr: QrSvg }
  | { readonly kind: 'revoked' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'used'; readonly how: 'checked_in' | 'checked_out' };

export type PassCardKind = PassCard['kind'];

/** The state of one pass at `now`: revoked and used win over expiry (they say more). */
export function passCardKind(pass: BatchPass, now: Date): PassCardKind {
  switch (pass.status) {
    case 'cancelled':
      return 'revoked';
    case 'checked_in':
    case 'checked_out':
      return 'used';
    case 'expected':
    case 'registered':
      return pass.validUntil.getTime() > now.getTime() ? 'usable' : 'expired';
  }
}

/** The card of a pass, given its drawing when (and only when) it is usable. */
export function passCard(pass: BatchPass, now: Date, qr: QrSvg | null): PassCard {
  const kind = passCardKind(pass, now);
  switch (kind) {
    case 'usable':
      if (qr === null) throw new Error('a usable pass is shown with its QR code');
      return { kind, confirmed: pass.status === 'registered', qr };
    case 'used':
      return { kind, how: pass.status === 'checked_out' ? 'checked_out' : 'checked_in' };
    default:
      return { kind };
  }
}

/**
 * The confirmation part of the page: `open` while a usable pass still waits for the guest
 * (`expected`), `confirmed` once every usable pass is `registered`, `closed` when no pass is usable.
 */
export type RegistrationState = 'open' | 'confirmed' | 'closed';

export function registrationState(passes: readonly BatchPass[], now: Date): RegistrationState {
  const usable = passes.filter((p) => passCardKind(p, now) === 'usable');
  if (usable.length === 0) return 'closed';
  return usable.some((p) => p.status === 'expected') ? 'open' : 'confirmed';
}

/** The form as the guest filled it, and what was wrong with it. */
export interface RegistrationForm {
  readonly csrfToken: string;
  readonly nameOnId: string;
  readonly vehicleNumber: string;
  readonly errors: { readonly nameOnId: string | null; readonly vehicleNumber: string | null };
}

export interface PassPageModel {
  /** The page's own token: the form and the calendar link point back at it. */
  readonly token: string;
  readonly firstName: string;
  readonly facilityName: string;
  /** The facility's IANA zone: times are shown as its wall clock, with its name. */
  readonly timeZone: string;
  /** `YYYY-MM-DD`. */
  readonly arrivalDate: string;
  /** `HH:MM` or null. */
  readonly arrivalTime: string | null;
  readonly validFrom: Date;
  readonly validUntil: Date;
  readonly invitedBy: string | null;
  /** In creation order. */
  readonly passes: readonly PassCard[];
  readonly registration:
    | { readonly state: 'open'; readonly form: RegistrationForm }
    | { readonly state: 'confirmed' }
    | { readonly state: 'closed' };
}

export const NAME_ON_ID_MAX = 100;
export const VEHICLE_NUMBER_MAX = 32;

export interface RegistrationInput {
  readonly nameOnId: string;
  readonly vehicleNumber: string | null;
}

// Control characters (line breaks included) have no place in a name or a plate.
const CONTROL = /\p{Cc}/u;

/** Checks the form's fields (trimmed; lengths in characters). */
export function parseRegistration(fields: { nameOnId: string; vehicleNumber: string }):
  | { readonly ok: true; readonly value: RegistrationInput }
  | { readonly ok: false; readonly errors: RegistrationForm['errors'] } {
  const name = fields.nameOnId.trim();
  const vehicle = fields.vehicleNumber.trim();
  const length = (text: string) => [...text].length;
  const nameError =
    name === ''
      ? 'Enter your name as it is written on your ID.'
      : length(name) > NAME_ON_ID_MAX
        ? `Your name can be at most ${NAME_ON_ID_MAX} characters long.`
        : CONTROL.test(name)
          ? 'Your name contains characters that cannot be used.'
          : null;
  const vehicleError =
    length(vehicle) > VEHICLE_NUMBER_MAX
      ? `The vehicle number can be at most ${VEHICLE_NUMBER_MAX} characters long.`
      : CONTROL.test(vehicle)
        ? 'The vehicle number contains characters that cannot be used.'
        : null;
  if (nameError !== null || vehicleError !== null) return { ok: false, errors: { nameOnId: nameError, vehicleNumber: vehicleError } };
  return { ok: true, value: { nameOnId: name, vehicleNumber: vehicle === '' ? null : vehicle } };
}
