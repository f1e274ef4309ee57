// SPDX-License-Identifier: Apache-2.0
// The signing capabilities from inside an action (ES5, so both engines run it), with every
// refusal caught: ethers_action.mjs checks the answers with ethers and node's Ed25519.
function attempt(f) {
  try {
    return { ok: f() };
  } catch (e) {
    return { error: String(e && e.message !== undefined ? e.message : e) };
  }
}
var p = params;
var out = {};
out.secp = attempt(function () { return Enact.getPublicKey({ pkpId: p.pkp, scheme: 'secp256k1' }); });
out.secpDefault = attempt(function () { return Enact.getPublicKey({ pkpId: p.pkp }); });
out.ed = attempt(function () { return Enact.getPublicKey({ pkpId: p.pkp, scheme: 'ed25519' }); });
out.edText = attempt(function () { return Enact.signEd25519({ pkpId: p.pkp, message: p.text }); });
out.edHex = attempt(function () { return Enact.signEd25519({ pkpId: p.pkp, message: p.hex }); });
out.typed = attempt(function () { return Enact.signTypedData({ pkpId: p.pkp, typedData: p.typedData, name: 'permit' }); });
out.typedText = attempt(function () { return Enact.signTypedData({ pkpId: p.pkp, typedData: JSON.stringify(p.typedData) }); });
out.tx = attempt(function () { return Enact.signTransaction({ pkpId: p.pkp, tx: p.tx }); });
out.create = attempt(function () { return Enact.signTransaction({ pkpId: p.pkp, tx: p.create }); });

// Refused, each with nothing signed.
var callers = {
  signEd25519: function (pkp) { return Enact.signEd25519({ pkpId: pkp, message: 'x' }); },
  getPublicKey: function (pkp) { return Enact.getPublicKey({ pkpId: pkp, scheme: 'ed25519' }); },
  signTypedData: function (pkp) { return Enact.signTypedData({ pkpId: pkp, typedData: p.typedData, name: 'stolen' }); },
  signTransaction: function (pkp) { return Enact.signTransaction({ pkpId: pkp, tx: p.tx }); }
};
out.outsider = {};
out.foreign = {};
for (var m in callers) {
  out.outsider[m] = attempt(function () { return callers[m](p.outsider); });
  out.foreign[m] = attempt(function () { return callers[m](p.foreign); });
}
out.badTyped = [];
for (var i = 0; i < p.badTyped.length; i++) {
  out.badTyped.push(attempt(function () {
    return Enact.signTypedData({ pkpId: p.pkp, typedData: p.badTyped[i], name: 'bad' + i });
  }));
}
out.badTx = [];
for (var j = 0; j < p.badTx.length; j++) {
  out.badTx.push(attempt(function () { return Enact.signTransaction({ pkpId: p.pkp, tx: p.badTx[j] }); }));
}
out.badEd = attempt(function () { return Enact.signEd25519({ pkpId: p.pkp, message: '0xzz' }); });
out.badScheme = attempt(function () { return Enact.getPublicKey({ pkpId: p.pkp, scheme: 'sr25519' }); });
Enact.setResponse(out);
