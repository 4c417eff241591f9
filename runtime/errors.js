/**
 * The runtime's one error: a `code` (one of py/onepass/contract.py's ERRORS), a message in plain words for the
 * reader, whether running again may work, and the raw text behind it (`detail`: a traceback, onnxruntime's words).
 * A refusal from Python (contract.Refusal) arrives as one, with its code; so do the worker's, the loader's and the
 * client's own failures. Across a worker it travels as its plain fields (worker.js's `describe`), and is made again
 * on the far side (`from`).
 */
export class OnepassError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{retryable?: boolean, detail?: string}} [options]
   */
  constructor(code, message, { retryable = false, detail } = {}) {
    super(message);
    this.code = code;
    this.retryable = retryable;
    if (detail !== undefined) this.detail = detail;
  }

  /**
   * From the plain fields a worker posted: {code, message, retryable, detail?}.
   * @param {import('./contract.js').ErrorFields} fields
   */
  static from({ code, message, retryable, detail }) {
    return new OnepassError(code, message, { retryable, detail });
  }
}
