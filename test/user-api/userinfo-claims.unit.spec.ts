// UserInfo claims by scope (OIDC Core §5.4): pure.
import { expect } from 'chai';
import { userInfoClaims } from '../../query-service/user/userinfo.js';

const user = { user_id: 42, first_name: 'Marie', last_name: 'Curie', email: 'marie@example.com' };

describe('userInfoClaims (unit)', () => {
  it('always gives sub, as a string', () => {
    expect(userInfoClaims(user, ['openid'])).to.deep.equal({ sub: '42' });
    expect(userInfoClaims(user, ['openid', 'passes:read', 'offline_access'])).to.deep.equal({ sub: '42' });
  });

  it('gates the name claims behind profile and the email claims behind email', () => {
    expect(userInfoClaims(user, ['openid', 'profile'])).to.deep.equal({ sub: '42', name: 'Marie Curie', given_name: 'Marie', family_name: 'Curie' });
    expect(userInfoClaims(user, ['openid', 'email'])).to.deep.equal({ sub: '42', email: 'marie@example.com', email_verified: false });
  });

  it('never gives picture: the service stores no photo', () => {
    expect(userInfoClaims(user, ['openid', 'profile', 'email'])).not.to.have.property('picture');
  });
});
