#!/usr/bin/env python3
"""check_sizes.py on made-up C++, Fortran and Python snippets: what it must
flag and what it must not.

    python3 tests/style/test_check_sizes.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # nothing written into the source tree
import check_sizes as cs  # noqa: E402

LIMIT = cs.MAX_FUNCTION_LINES


def cpp_function(name, lines, indent=''):
    """A C++ function of exactly `lines` lines, signature to closing brace."""
    body = [f'{indent}  x += {i};' for i in range(lines - 2)]
    return '\n'.join([f'{indent}int {name}(int x) {{'] + body + [f'{indent}}}']) + '\n'


def fortran_subroutine(name, lines):
    body = [f'  x = x + {i}' for i in range(lines - 3)]
    return '\n'.join([f'subroutine {name}(x)', '  integer :: x'] + body + [f'end subroutine {name}']) + '\n'


def names(found):
    return {name: length for _, name, length in found}


def flagged(path, text):
    return [key for key, _ in cs.offenders(path, text)]


class CppFunctions(unittest.TestCase):

    def test_limit(self):
        text = cpp_function('long_one', LIMIT + 1) + cpp_function('at_limit', LIMIT)
        self.assertEqual(names(cs.c_functions(text)), {'long_one': LIMIT + 1, 'at_limit': LIMIT})
        self.assertEqual(flagged('a.cpp', text), [('a.cpp', 'long_one')])

    def test_line_reported(self):
        text = '// a comment\n\n' + cpp_function('f', LIMIT + 1)
        self.assertEqual(cs.c_functions(text), [(3, 'f', LIMIT + 1)])

    def test_class_of_short_methods(self):
        methods = ''.join(cpp_function(f'm{i}', 10, '  ') for i in range(20))
        text = 'namespace n {\nclass Big {\n public:\n' + methods + '};\n}  // namespace n\n'
        self.assertGreater(text.count('\n'), 200)
        found = cs.c_functions(text)
        self.assertEqual(len(found), 20)
        self.assertTrue(all(length == 10 for _, _, length in found))
        self.assertEqual(flagged('a.hpp', text), [])

    def test_lambda_counts_in_its_function(self):
        lam = ['  auto add = [&](int y) {'] + [f'    y += {i};' for i in range(40)] + ['    return y;', '  };']
        rest = [f'  x += {i};' for i in range(30)]
        text = '\n'.join(['int outer(int x) {'] + lam + rest + ['  return add(x);', '}']) + '\n'
        self.assertEqual(cs.c_functions(text), [(1, 'outer', 76)])
        self.assertEqual(flagged('a.cpp', text), [('a.cpp', 'outer')])

    def test_brace_initializers_are_not_functions(self):
        rows = ''.join(f'    {{"k{i}", f({i})}},\n' for i in range(80))
        text = ('const Entry table[] = {\n' + rows + '};\n'
                'std::vector<int> v{g(1), g(2)};\n'
                'std::function<void()> cb{[] {}};\n'
                'enum class E { a = f(1), b };\n')
        self.assertEqual(cs.c_functions(text), [])
        self.assertEqual(flagged('a.cpp', text), [])

    def test_constructor_with_brace_member_initializers(self):
        text = ('struct S {\n  S(int a) : x_(a), y_{a + 1}, z_{} {\n    x_ += 1;\n  }\n'
                '  int x_, y_, z_;\n};\n')
        self.assertEqual(cs.c_functions(text), [(2, 'S', 3)])

    def test_comments_strings_and_preprocessor_ignored(self):
        text = ('#define OPEN {\n'
                '/* void f() { */\n'
                'const char* g(char c = \'{\') {  // }\n'
                '  return "}{";\n'
                '}\n'
                'int h() { return 1\'000; }\n')
        self.assertEqual(names(cs.c_functions(text)), {'g': 3, 'h': 1})

    def test_extern_c_template_and_operators(self):
        text = ('extern "C" {\n'
                'int c_api(void) {\n  return 0;\n}\n'
                '}\n'
                'template <class T, typename = void>\nT tf(T v) {\n  return v;\n}\n'
                'struct P {\n  bool operator==(const P&) const { return true; }\n'
                '  int operator()(int a) const noexcept { return a; }\n};\n'
                'auto trailing(int a) -> std::vector<int> {\n  return {a};\n}\n')
        self.assertEqual(names(cs.c_functions(text)),
                         {'c_api': 3, 'tf': 4, 'operator==': 1, 'operator()': 1, 'trailing': 3})

    def test_control_statements_inside_are_part_of_the_function(self):
        text = 'void f() {\n  if (a) {\n    for (;;) {\n    }\n  }\n}\n'
        self.assertEqual(cs.c_functions(text), [(1, 'f', 6)])


class FortranProcedures(unittest.TestCase):

    def test_limit(self):
        text = ('module m\ncontains\n' + fortran_subroutine('long_one', LIMIT + 1) +
                fortran_subroutine('at_limit', LIMIT) + 'end module m\n')
        self.assertEqual(names(cs.fortran_functions(text)), {'long_one': LIMIT + 1, 'at_limit': LIMIT})
        self.assertEqual(flagged('m.f90', text), [('m.f90', 'long_one')])

    def test_interface_declarations_are_not_bodies(self):
        decls = ''.join(f'    subroutine s{i}(x) bind(c)\n      integer :: x\n    end subroutine s{i}\n'
                        for i in range(30))
        text = ('module m\n  interface\n' + decls + '  end interface\n'
                '  interface gen\n    module procedure a, b\n  end interface gen\n'
                'contains\n'
                '  integer(c_int) FUNCTION f(x) result(r) ! subroutine g(\n'
                '    integer :: x, function_count\n'
                "    character(len=*), parameter :: s = 'end function'\n"
                '    r = x\n'
                '  END FUNCTION f\n'
                'end module m\n')
        self.assertEqual(cs.fortran_functions(text), [(98, 'f', 5)])

    def test_continuation_and_submodule_procedures(self):
        text = ('submodule (m) s\ncontains\n'
                '  module procedure p\n    x = 1\n  end procedure p\n'
                '  pure module subroutine q(a, &\n      b)\n    a = b\n  end subroutine q\n'
                'end submodule s\n')
        self.assertEqual(cs.fortran_functions(text), [(3, 'p', 3), (6, 'q', 4)])


class PythonFunctions(unittest.TestCase):

    def test_limit(self):
        body = ''.join(f'    x += {i}\n' for i in range(LIMIT - 1))
        text = 'def at_limit(x):\n' + body + '\n\ndef long_one(x):\n' + body + '    return x\n'
        self.assertEqual(names(cs.python_functions(text)), {'at_limit': LIMIT, 'long_one': LIMIT + 1})
        self.assertEqual(flagged('g.py', text), [('g.py', 'long_one')])


class Files(unittest.TestCase):

    def test_file_limit(self):
        short = 'int x;\n' * cs.MAX_FILE_LINES
        self.assertEqual(flagged('a.cpp', short), [])
        self.assertEqual(flagged('a.cpp', short + 'int y;\n'), [('a.cpp', None)])

    def test_templates_are_generated(self):
        self.assertTrue(cs.is_generated('lib/fortran/devmesh_mpi.inc.in'))
        self.assertFalse(cs.is_generated('lib/fortran/gen_fortran_interface.py'))

    def test_known_offenders_only_shrink(self):
        long_file = 'int x;\n' * (cs.MAX_FILE_LINES + 1)
        sources = {'a.cpp': long_file + cpp_function('f', LIMIT + 1), 'b.cpp': 'int y;\n'}
        known = {('a.cpp', None): 'being split', ('a.cpp', 'f'): 'being split'}
        failures, tolerated = cs.check(sources, known)
        self.assertEqual((failures, len(tolerated)), ([], 2))
        failures, _ = cs.check(sources, {('a.cpp', None): 'being split'})
        self.assertEqual(len(failures), 1)
        self.assertIn('a.cpp:', failures[0])
        failures, _ = cs.check(sources, {**known, ('b.cpp', None): 'being split'})
        self.assertEqual(len(failures), 1)
        self.assertIn('within the limits', failures[0])


if __name__ == '__main__':
    unittest.main()
