-- Real shop exports rarely grade body, tannins and acidity: a wine may come without them.
-- NULL means "not graded" (the 1–5 checks still hold for every graded value); nothing invents a grade.
ALTER TABLE wines ALTER COLUMN body DROP NOT NULL;
ALTER TABLE wines ALTER COLUMN tannins DROP NOT NULL;
ALTER TABLE wines ALTER COLUMN acidity DROP NOT NULL;
