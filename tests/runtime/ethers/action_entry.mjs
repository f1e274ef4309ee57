// SPDX-License-Identifier: Apache-2.0
// An action as a user writes it with ethers 6 imported from npm: ethers_action.mjs bundles this file
// with esbuild into one script and runs it on enact-server. `params` and `Enact` are the run's
// globals (docs/actions.md).
import { Interface, parseUnits, verifyMessage, formatUnits } from 'ethers';

const amount = parseUnits(params.amount, params.decimals);
const erc20 = new Interface(['function transfer(address to, uint256 amount) returns (bool)']);
const calldata = erc20.encodeFunctionData('transfer', [params.to, amount]);
const recovered = verifyMessage(params.message, params.signature);
const mine = await Enact.signMessage({ pkpId: params.pkpId, message: params.message });
Enact.setResponse({
  amount: amount.toString(),
  doubled: formatUnits(amount * 2n, params.decimals),
  calldata,
  recovered,
  mine_recovered: verifyMessage(params.message, mine),
});
