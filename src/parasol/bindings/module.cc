// parasol._parasol: the extension module the Python package `parasol` wraps. parasol's typed
// errors arrive as Python exceptions of the same names (parasol.TimeoutError, PeerGoneError, ...,
// all subclasses of parasol.Error), with the C++ message (rank, operation, peer).
#include <torch/extension.h>

#include "parasol/bindings/c10d_backend.h"
#include "parasol/bindings/world.h"
#include "parasol/core/error.h"

namespace py = pybind11;

PYBIND11_MODULE(_parasol, m) {
  m.doc() = "parasol's collectives, gradient synchroniser and parameter server";
  // Translators run newest first: the base class is registered first, so the derived ones win.
  // Each error is also the built-in a Python program would catch for it (a deadline is a
  // TimeoutError, a bad argument a ValueError, ...): `except TimeoutError` catches parasol's too.
  auto error = py::register_exception<parasol::Error>(m, "Error", PyExc_RuntimeError);
  auto both = [&](PyObject* builtin) { return py::make_tuple(error, py::handle(builtin)); };
  py::register_exception<parasol::InvalidArgumentError>(m, "InvalidArgumentError",
                                                        both(PyExc_ValueError).ptr());
  py::register_exception<parasol::ParseError>(m, "ParseError", both(PyExc_ValueError).ptr());
  py::register_exception<parasol::IoError>(m, "IoError", both(PyExc_OSError).ptr());
  py::register_exception<parasol::TimeoutError>(m, "TimeoutError", both(PyExc_TimeoutError).ptr());
  py::register_exception<parasol::PeerGoneError>(m, "PeerGoneError", both(PyExc_ConnectionError).ptr());
  py::register_exception<parasol::MismatchError>(m, "MismatchError", error.ptr());
  py::register_exception<parasol::AbortedError>(m, "AbortedError", error.ptr());
  py::register_exception<parasol::UnavailableError>(m, "UnavailableError", error.ptr());
  py::register_exception<parasol::InternalError>(m, "InternalError", error.ptr());
  parasol::bindings::RegisterComm(m);
  parasol::bindings::RegisterSync(m);
  parasol::bindings::RegisterPs(m);
  parasol::bindings::RegisterC10d(m);
}
