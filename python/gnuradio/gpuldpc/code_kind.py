"""Check that a block's code is of the kind (binary or GF(q)) the block handles."""
from gpuldpc.streaming import load_code


def require_kind(spec, binary: bool):
    """Raise if ``spec`` names a GF(q) code for a binary block or the reverse."""
    code = load_code(spec)
    if binary and not code.is_binary:
        raise ValueError(f"code {code.name!r} is a GF({code.q}) code: use the NB-LDPC block "
                         "(gpuldpc.nb_ldpc_decoder / nb_ldpc_encoder) for it")
    if not binary and code.is_binary:
        raise ValueError(f"code {code.name!r} is binary: use the LDPC block "
                         "(gpuldpc.ldpc_decoder / ldpc_encoder) for it")
    return code
