// Passkeys in the browser: sign-in (#passkey-signin on the sign-in page), registration
// (#passkey-register in #passkeys on the account page) and an invitee's new account made with a
// passkey (#passkey-join in the console's join form, in #join-passkey, which stays hidden where
// this script does not run or the browser has no WebAuthn). Served as is from /signin/passkey.js,
// loaded with <script defer>: no build step, no inline code, nothing evaluated, so it runs under
// a Content-Security-Policy of script-src 'self'. The server does every check; this only moves
// bytes between the server's JSON (base64url strings) and the WebAuthn API (ArrayBuffers).
'use strict';

(function () {
  function csrfToken() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute('content') || '' : '';
  }

  function toBuffer(base64url) {
    var base64 = base64url.replace(/-/g, '+').replace(/_/g, '/');
    var padded = base64 + '==='.slice((base64.length + 3) % 4);
    var binary = atob(padded);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer);
    var binary = '';
    for (var i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }

  // A refusal keeps the server's words (error.said), which the join form shows ("Enter your first name").
  function postJson(path, body) {
    return fetch(path, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': csrfToken() },
      body: JSON.stringify(body || {}),
    }).then(function (response) {
      return response.json().then(function (json) {
        if (!response.ok) {
          var error = new Error((json && (json.error_description || json.error)) || 'request failed');
          error.said = typeof (json && json.error) === 'string' && !json.error_description ? json.error : null;
          throw error;
        }
        return json;
      });
    });
  }

  function creationOptions(json) {
    var options = Object.assign({}, json);
    options.challenge = toBuffer(json.challenge);
    options.user = Object.assign({}, json.user, { id: toBuffer(json.user.id) });
    options.excludeCredentials = (json.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: toBuffer(c.id) });
    });
    return options;
  }

  function requestOptions(json) {
    var options = Object.assign({}, json);
    options.challenge = toBuffer(json.challenge);
    options.allowCredentials = (json.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: toBuffer(c.id) });
    });
    return options;
  }

  function registrationJson(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        attestationObject: toBase64url(response.attestationObject),
        transports: typeof response.getTransports === 'function' ? response.getTransports() : [],
      },
    };
  }

  function authenticationJson(credential) {
    var response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      authenticatorAttachment: credential.authenticatorAttachment || undefined,
      clientExtensionResults: credential.getClientExtensionResults(),
      response: {
        clientDataJSON: toBase64url(response.clientDataJSON),
        authenticatorData: toBase64url(response.authenticatorData),
        signature: toBase64url(response.signature),
        userHandle: response.userHandle ? toBase64url(response.userHandle) : null,
      },
    };
  }

  // The account page has a status line for passkeys; elsewhere one is added after the button.
  function showStatus(near, message) {
    var status = document.getElementById('passkey-status') || near.parentNode.querySelector('.passkey-status');
    if (!status) {
      status = document.createElement('p');
      status.className = 'passkey-status';
      status.setAttribute('role', 'status');
      near.parentNode.insertBefore(status, near.nextSibling);
    }
    status.textContent = message;
  }

  // Sign-in ends with a form POST, not fetch: the answer is a redirect (to a second factor, the
  // pending authorization or the account page) that the browser must follow as a navigation.
  function submitAssertion(credential) {
    var form = document.createElement('form');
    form.method = 'POST';
    form.action = '/signin/passkey/verify';
    form.hidden = true;
    [
      ['csrf', csrfToken()],
      ['credential', JSON.stringify(authenticationJson(credential))],
    ].forEach(function (field) {
      var input = document.createElement('input');
      input.type = 'hidden';
      input.name = field[0];
      input.value = field[1];
      form.appendChild(input);
    });
    document.body.appendChild(form);
    form.submit();
  }

  function signIn(button) {
    button.disabled = true;
    postJson('/signin/passkey/options')
      .then(function (json) {
        return navigator.credentials.get({ publicKey: requestOptions(json) });
      })
      .then(function (credential) {
        if (!credential) throw new Error('no passkey was chosen');
        submitAssertion(credential);
      })
      .catch(function () {
        button.disabled = false;
        showStatus(button, 'Passkey sign-in did not complete. Try again or use your password.');
      });
  }

  function register(button) {
    button.disabled = true;
    postJson('/account/passkeys/options')
      .then(function (json) {
        return navigator.credentials.create({ publicKey: creationOptions(json) });
      })
      .then(function (credential) {
        if (!credential) throw new Error('no passkey was created');
        return postJson('/account/passkeys/verify', { credential: registrationJson(credential) });
      })
      .then(function () {
        showStatus(button, 'Passkey added.');
        window.location.reload();
      })
      .catch(function () {
        button.disabled = false;
        showStatus(button, 'The passkey was not added. Try again.');
      });
  }

  // The join form's names go with both requests; the form's own action is the join link.
  function join(button) {
    var form = button.form;
    var base = form.getAttribute('action');
    var names = { first_name: form.elements.first_name.value, last_name: form.elements.last_name.value };
    button.disabled = true;
    showStatus(button, '');
    postJson(base + '/passkey/options', names)
      .then(function (json) {
        return navigator.credentials.create({ publicKey: creationOptions(json) });
      })
      .then(function (credential) {
        if (!credential) throw new Error('no passkey was created');
        return postJson(base + '/passkey/verify', Object.assign({ credential: registrationJson(credential) }, names));
      })
      .then(function (json) {
        window.location.assign(json.location);
      })
      .catch(function (error) {
        button.disabled = false;
        var said = error && error.said ? error.said.charAt(0).toUpperCase() + error.said.slice(1) + '. ' : '';
        showStatus(button, said + 'Your account was not set up with a passkey. Try again, or choose a password.');
      });
  }

  function start() {
    var supported = typeof window.PublicKeyCredential === 'function' && !!navigator.credentials;
    var signInButton = document.getElementById('passkey-signin');
    var registerButton = document.getElementById('passkey-register');
    var joinButton = document.getElementById('passkey-join');
    [signInButton, registerButton].forEach(function (button) {
      if (button && !supported) {
        button.disabled = true;
        showStatus(button, 'This browser does not support passkeys.');
      }
    });
    if (!supported) return;
    // The join form offers a passkey only where one can be made; elsewhere it is the password form.
    if (joinButton) {
      document.getElementById('join-passkey').hidden = false;
      joinButton.addEventListener('click', function () { join(joinButton); });
    }
    if (signInButton) signInButton.addEventListener('click', function () { signIn(signInButton); });
    if (registerButton) registerButton.addEventListener('click', function () { register(registerButton); });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
