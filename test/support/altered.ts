// A credential, cursor or token with one character changed for another, never to itself by
// chance. Away from the end: a base64url value's last character carries padding bits a decoder
// may ignore.
export function alteredCharacter(value: string): string {
  const i = Math.max(0, value.length - 10);
  return `${value.slice(0, i)}${value[i] === 'x' ? 'y' : 'x'}${value.slice(i + 1)}`;
}
