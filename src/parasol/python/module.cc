// parasol._parasol: the extension module the Python package `parasol` wraps. parasol's typed
// errors arrive as Python exceptions of the same names (parasol.TimeoutError, PeerGoneError, ...,
// all subclasses of parasol.Error), with the C++ message (rank, operation, peer).
#include <torch/extension.h>

#include "parasol/core/error.h"
#include "parasol/python/world.h"

namespace py = pybind11;

PYBIND11_MODULE(_parasol, m) {
  m.doc() = "parasol's collectives, gradient synchroniser and parameter server";
  // Translators run newest first: the base class is registered first, so the derived ones win.
  auto error = py::register_exception<parasol::Error>(m, "Error", PyExc_RuntimeError);
  py::register_exception<parasol::InvalidArgumentError>(m, "InvalidArgumentError", error.ptr());
  py::register_exception<parasol::ParseError>(m, "ParseError", error.ptr());
  py::register_exception<parasol::IoError>(m, "IoError", error.ptr());
  py::register_exception<parasol::TimeoutError>(m, "TimeoutError", error.ptr());
  py::register_exception<parasol::PeerGoneError>(m, "PeerGoneError", error.ptr());
  py::register_exception<parasol::MismatchError>(m, "MismatchError", error.ptr());
  py::register_exception<parasol::AbortedError>(m, "AbortedError", error.ptr());
  py::register_exception<parasol::UnavailableError>(m, "UnavailableError", error.ptr());
  py::register_exception<parasol::InternalError>(m, "InternalError", error.ptr());
  parasol::python::RegisterComm(m);
  parasol::python::RegisterSync(m);
  parasol::python::RegisterPs(m);
}
